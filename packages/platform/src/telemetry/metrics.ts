import { Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import type { EmfOutput, MetricResolution, MetricUnit } from '@aws-lambda-powertools/metrics/types';
import { telemetrySchema } from '../config/telemetry';
import { invocationScoped } from '../invocation';
import { writeLine } from '../stdout';
import { logger } from './logger';

/**
 * Every metric the service emits, in CloudWatch's embedded metric format
 * (Powertools Metrics), under the namespace METRICS_NAMESPACE with the
 * dimension `service`. docs/operating.md, the alarms in infra/ and
 * the local /metrics all name these. Dimensions stay few and bounded: a route
 * of the route table, a link-failure reason, an event kind.
 */
export const metricCatalog = {
  // HTTP, one EMF document per request, with the dimension sets [service, route] and [service].
  /** HTTP requests answered (1 per request). */
  Requests: { unit: 'Count' },
  /** From the first middleware to the response. */
  Latency: { unit: 'Milliseconds' },
  /** 1 when the answer was a 4xx, else 0: the average is the 4xx rate. */
  Responses4xx: { unit: 'Count' },
  /** 1 when the answer was a 5xx, else 0: the average is the 5xx rate. */
  Responses5xx: { unit: 'Count' },
  /** 1 when the answer was 503 (database or a dependency unavailable), else 0. */
  Responses503: { unit: 'Count' },
  /** Time in database statements and transactions during the request, summed (concurrent ones add up). */
  DatabaseTime: { unit: 'Milliseconds' },
  /** Transient database failures retried during the request. */
  DatabaseRetries: { unit: 'Count' },
  // Accounts, published with the request's document.
  /** Accounts created by provisioning. */
  AccountsProvisioned: { unit: 'Count' },
  /** Provisioning refused with 409: the email belongs to another account. */
  ProvisioningConflicts: { unit: 'Count' },
  /** New wallet-link challenges (a live one returned again is not counted). */
  ChallengesIssued: { unit: 'Count' },
  /** Wallets linked. */
  WalletsLinked: { unit: 'Count' },
  /** Wallet links refused, by the dimension reason. */
  WalletLinkFailures: { unit: 'Count' },
  /** Requests refused with 429 by the per-account limit. */
  RateLimited: { unit: 'Count' },
  // Hub, one document per WebSocket event.
  /** Hub connections accepted. */
  HubConnects: { unit: 'Count' },
  /** Hub connections refused (an origin not allowed, a bad connection token). */
  HubConnectsRefused: { unit: 'Count' },
  /** Hub connections closed. */
  HubDisconnects: { unit: 'Count' },
  /** Hub messages received. */
  HubMessages: { unit: 'Count' },
  /** Successful Subscribe invocations. */
  HubSubscriptions: { unit: 'Count' },
  // Listener, one document per read and one per event (dimension kind).
  /** NOTIFYs on the indexer's channel (<schema>_live_query) that called for a read, answered by the read. */
  ListenerNotifications: { unit: 'Count' },
  /** Reads, of the forge requests or of the listings, each counted: what a notification names, or both on the poll. */
  ListenerReads: { unit: 'Count' },
  /** One read, its fan-outs included. */
  ListenerReadTime: { unit: 'Milliseconds' },
  /** 1 per read completed by the leading listener: missing means no one is detecting events. */
  ListenerHeartbeat: { unit: 'Count' },
  /** From the first notification a read answers to the end of that read (its fulfilments posted, or its marketChanged handed to the broadcast). */
  ListenerLag: { unit: 'Milliseconds' },
  /** From the time of the last block the indexer indexed to now, the largest over its chains (Ponder's checkpoint), read by the leading listener every poll; absent when unknown. */
  IndexerLag: { unit: 'Seconds' },
  /** Events detected, by the dimension kind. */
  ListenerEvents: { unit: 'Count' },
  /** Posting one event to its audience, by the dimension kind. */
  ListenerFanOutTime: { unit: 'Milliseconds' },
  /** PostToConnection calls that delivered, by the dimension kind. */
  ListenerPostsSent: { unit: 'Count' },
  /** Connections the management API reported gone (410), removed, by the dimension kind. */
  ListenerGoneConnections: { unit: 'Count' },
  /** Posts that failed in a way that may hide a delivery (a timeout after sending, a 5xx): never tried again, by the dimension kind. */
  ListenerFailedPosts: { unit: 'Count' },
  /** Posts not delivered, failed or skipped at the deadline: connections that missed the event and must see the gap, by the dimension kind. */
  UndeliveredPosts: { unit: 'Count' },
  // Webhooks, published by the listener, by the dimension endpoint (docs/webhooks.md).
  /** Deliveries a receiver accepted (a 2xx). */
  WebhookDeliveries: { unit: 'Count' },
  /** Attempts that failed: refused, timed out, reset, or never sent; each is tried again or dead-lettered. */
  WebhookFailedAttempts: { unit: 'Count' },
  /** Deliveries dead-lettered once their retry window passed. */
  WebhookDeadLettered: { unit: 'Count' },
  /** The age of the oldest delivery not yet done, from its first attempt, published every poll by the leading listener. */
  WebhookOldestPending: { unit: 'Seconds' },
  // The fan-out function, one document per shard invocation (dimension kind); its posts count in the three listener metrics above.
  /** One shard invocation of the fan-out function: its read and its posts, by the dimension kind. */
  FanOutShardTime: { unit: 'Milliseconds' },
  /** Posts a shard invocation never attempted because its deadline came first, by the dimension kind. */
  FanOutSkippedPosts: { unit: 'Count' },
} as const satisfies Record<string, { unit: MetricUnit }>;

export type { EmfOutput };

export type MetricName = keyof typeof metricCatalog;

/**
 * The documents the listener prints (packages/listener/src/metrics.ts): the
 * metrics each carries and the dimensions it adds to `service`. On Fargate
 * nothing extracts EMF from the container's output, so infra/ publishes these
 * with log metric filters on the listener's log group, each with exactly
 * these dimensions.
 */
export const listenerDocuments = {
  read: { dimensions: [], metrics: ['ListenerReads', 'ListenerReadTime', 'ListenerNotifications', 'ListenerHeartbeat', 'ListenerLag'] },
  indexer: { dimensions: [], metrics: ['IndexerLag'] },
  event: {
    dimensions: ['kind'],
    metrics: ['ListenerEvents', 'ListenerFanOutTime', 'ListenerPostsSent', 'ListenerGoneConnections', 'ListenerFailedPosts', 'UndeliveredPosts'],
  },
  webhook: { dimensions: ['endpoint'], metrics: ['WebhookDeliveries', 'WebhookFailedAttempts', 'WebhookDeadLettered', 'WebhookOldestPending'] },
} as const satisfies Record<string, { dimensions: readonly ('kind' | 'reason' | 'endpoint')[]; metrics: readonly MetricName[] }>;

/** The bounded values of the dimensions that are not a route. */
export type WalletLinkFailure = 'noChallenge' | 'badSignature' | 'addressMismatch' | 'walletTaken';
export type ListenerEventKind = 'marketChanged' | 'forgeFulfilled';

/** The value of the `service` dimension of every metric. */
export const metricsService = 'hatchery';

/** Where EMF documents go. */
export type EmfSink = (document: EmfOutput) => void;

/** Standard output, one JSON line each, written synchronously: the line leaves before the invocation ends. */
const printLine: EmfSink = (document) => writeLine(`${JSON.stringify(document)}\n`);

let sink: EmfSink = printLine;

/** The local stack takes the documents itself (its /metrics), unprinted; undefined prints again. */
export function setEmfSink(next: EmfSink | undefined): void {
  sink = next ?? printLine;
}

/**
 * Powertools Metrics, with its limits (a document holds at most 100 metrics
 * and 100 values of one, and more flush into further documents; at most 29
 * dimensions besides `service`, the rest refused with a RangeError), and the
 * service's own:
 * - a value that is not a finite number is refused (RangeError): JSON would
 *   write NaN and Infinity as null, and CloudWatch drops the whole document;
 * - its documents go to the sink (standard output through stdout.ts, or the
 *   local stack's /metrics), not to the Node Console Powertools builds;
 * - an invocation that added no metric publishes nothing and says nothing:
 *   Powertools warns "No application metrics to publish" then, and a fan-out
 *   shard that failed adds none on purpose (Lambda's Errors counts it);
 * - a document that cannot be written (a metric and a dimension of one name)
 *   is logged and dropped, never thrown at the request that published it;
 * - its warnings (a dimension overwritten) are the service's log lines.
 */
export class Metrics extends PowertoolsMetrics {
  readonly #namespace: string;

  constructor(namespace: string, options: { singleMetric?: boolean } = {}) {
    super({ namespace, serviceName: metricsService, singleMetric: options.singleMetric, logger: logger() });
    this.#namespace = namespace;
  }

  override addMetric(name: string, unit: MetricUnit, value: number, resolution?: MetricResolution): this {
    if (!Number.isFinite(value)) throw new RangeError(`${value} is not a finite number: the metric ${name} is not added`);
    return super.addMetric(name, unit, value, resolution);
  }

  override publishStoredMetrics(): this {
    try {
      if (!this.isDisabled() && this.hasStoredMetrics()) sink(this.serializeMetrics());
    } catch (error) {
      logger().error({ err: error }, 'metrics could not be published');
    } finally {
      this.clearMetrics();
      this.clearDimensions();
      this.clearMetadata();
    }
    return this;
  }

  /** The cold-start metric's document, and any other published at once: through the sink as well. */
  override singleMetric(): Metrics {
    return new Metrics(this.#namespace, { singleMetric: true });
  }
}

const namespace = () => telemetrySchema.shape.METRICS_NAMESPACE.parse(process.env.METRICS_NAMESPACE);

/** An instance of the service's namespace for documents published at once (read on its own, so metrics never depend on a valid configuration). */
export function createMetrics(): Metrics {
  return new Metrics(namespace());
}

let shared: Metrics | undefined;

/**
 * The process's instance. Powertools keeps its stored metrics and dimensions
 * per invocation (in Lambda's invoke store when invocations run concurrently),
 * so the logMetrics middleware publishes what one request added.
 */
export function metrics(): Metrics {
  shared ??= createMetrics();
  return shared;
}

/** Adds one metric of the catalog to `target`; a value the limits refuse is logged, never thrown: a metric never fails the request. */
function addRefusable(target: Metrics, name: MetricName, value: number): void {
  try {
    target.addMetric(name, metricCatalog[name].unit, value);
  } catch (error) {
    logger().warn({ err: error, metric: name }, 'metric refused');
  }
}

/** Adds one data point to the current invocation's document. */
export function addMetric(name: MetricName, value = 1): void {
  addRefusable(metrics(), name, value);
}

/** Publishes at once one document carrying an extra dimension (a reason, a kind), apart from the request's. */
export function publishWith(dimension: { name: 'reason' | 'kind' | 'endpoint'; value: string }, values: Partial<Record<MetricName, number>>): void {
  const single = createMetrics();
  single.addDimension(dimension.name, dimension.value);
  for (const [name, value] of Object.entries(values) as [MetricName, number][]) addRefusable(single, name, value);
  single.publishStoredMetrics();
}

/** Hands one EMF document to the current sink (the local stack's worker threads hand theirs to the main thread this way). */
export const emitEmf = (document: EmfOutput): void => sink(document);

export const countLinkFailure = (reason: WalletLinkFailure) => publishWith({ name: 'reason', value: reason }, { WalletLinkFailures: 1 });

/** Database time and retries of the current invocation, summed into one data point each at its end. */
interface DatabaseUse {
  ms: number;
  retries: number;
}

const databaseUse = invocationScoped<DatabaseUse>('hatchery.databaseUse', () => ({ ms: 0, retries: 0 }));

export function recordDatabaseTime(ms: number): void {
  databaseUse.get().ms += ms;
}

export function recordDatabaseRetry(): void {
  databaseUse.get().retries++;
}

/** What the invocation used so far, and a fresh start for the next one (outside Lambda's invoke store the tally is per process). */
export function takeDatabaseUse(): DatabaseUse {
  const use = databaseUse.get();
  databaseUse.reset();
  return use;
}
