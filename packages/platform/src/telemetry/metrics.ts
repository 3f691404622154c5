import { configSchema } from '../config';
import { metricsDisabled, noMetrics, serialize, store, type EmfOutput, type MetricUnit, type StoredMetrics } from './emf';
import { invocationScoped } from '../invocation';
import { writeLine } from '../stdout';

/**
 * Every metric the service emits, in CloudWatch's embedded metric format
 * (emf.ts), under the namespace METRICS_NAMESPACE with the
 * dimension `service`. docs/operating.md, the alarms in infra/ and
 * the local /metrics all name these. Dimensions stay few and bounded: a route
 * of the route table, a link-failure reason, an event kind.
 */
export const metricCatalog = {
  // HTTP, one EMF document per request, with the dimension sets [service, route] and [service].
  Requests: { unit: 'Count', help: 'HTTP requests answered (1 per request).' },
  Latency: { unit: 'Milliseconds', help: 'From the first middleware to the response.' },
  Responses4xx: { unit: 'Count', help: '1 when the answer was a 4xx, else 0: the average is the 4xx rate.' },
  Responses5xx: { unit: 'Count', help: '1 when the answer was a 5xx, else 0: the average is the 5xx rate.' },
  Responses503: { unit: 'Count', help: '1 when the answer was 503 (database or a dependency unavailable), else 0.' },
  DatabaseTime: { unit: 'Milliseconds', help: 'Time in database statements and transactions during the request, summed (concurrent ones add up).' },
  DatabaseRetries: { unit: 'Count', help: 'Transient database failures retried during the request.' },
  // Accounts, published with the request's document.
  AccountsProvisioned: { unit: 'Count', help: 'Accounts created by provisioning.' },
  ProvisioningConflicts: { unit: 'Count', help: 'Provisioning refused with 409: the email belongs to another account.' },
  ChallengesIssued: { unit: 'Count', help: 'New wallet-link challenges (a live one returned again is not counted).' },
  WalletsLinked: { unit: 'Count', help: 'Wallets linked.' },
  WalletLinkFailures: { unit: 'Count', help: 'Wallet links refused, by the dimension reason.' },
  RateLimited: { unit: 'Count', help: 'Requests refused with 429 by the per-account limit.' },
  // Hub, one document per WebSocket event.
  HubConnects: { unit: 'Count', help: 'Hub connections accepted.' },
  HubConnectsRefused: { unit: 'Count', help: 'Hub connections refused (an origin not allowed, a bad connection token).' },
  HubDisconnects: { unit: 'Count', help: 'Hub connections closed.' },
  HubMessages: { unit: 'Count', help: 'Hub messages received.' },
  HubSubscriptions: { unit: 'Count', help: 'Successful Subscribe invocations.' },
  // Listener, one document per read and one per event (dimension kind).
  ListenerNotifications: { unit: 'Count', help: "NOTIFYs on the indexer's channel (<schema>_live_query) that called for a read, answered by the read." },
  ListenerReads: { unit: 'Count', help: 'Reads, of the forge requests or of the listings, each counted: what a notification names, or both on the poll.' },
  ListenerReadTime: { unit: 'Milliseconds', help: 'One read, its fan-outs included.' },
  ListenerHeartbeat: { unit: 'Count', help: '1 per read completed by the leading listener: missing means no one is detecting events.' },
  ListenerLag: { unit: 'Milliseconds', help: 'From the first notification a read answers to the end of that read (its fulfilments posted, or its marketChanged handed to the broadcast).' },
  IndexerLag: {
    unit: 'Seconds',
    help: "From the time of the last block the indexer indexed to now, the largest over its chains (Ponder's checkpoint), read by the leading listener every poll; absent when unknown.",
  },
  ListenerEvents: { unit: 'Count', help: 'Events detected, by the dimension kind.' },
  ListenerFanOutTime: { unit: 'Milliseconds', help: 'Posting one event to its audience, by the dimension kind.' },
  ListenerPostsSent: { unit: 'Count', help: 'PostToConnection calls that delivered, by the dimension kind.' },
  ListenerGoneConnections: { unit: 'Count', help: 'Connections the management API reported gone (410), removed, by the dimension kind.' },
  ListenerFailedPosts: { unit: 'Count', help: 'Posts that failed otherwise (throttled, store error), by the dimension kind.' },
  // The fan-out function, one document per shard invocation (dimension kind); its posts count in the three listener metrics above.
  FanOutShardTime: { unit: 'Milliseconds', help: 'One shard invocation of the fan-out function: its read and its posts, by the dimension kind.' },
  FanOutSkippedPosts: { unit: 'Count', help: 'Posts a shard invocation never attempted because its deadline came first, by the dimension kind.' },
} as const satisfies Record<string, { unit: MetricUnit; help: string }>;

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
  event: { dimensions: ['kind'], metrics: ['ListenerEvents', 'ListenerFanOutTime', 'ListenerPostsSent', 'ListenerGoneConnections', 'ListenerFailedPosts'] },
} as const satisfies Record<string, { dimensions: readonly ('kind' | 'reason')[]; metrics: readonly MetricName[] }>;

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
 * The metrics of one document or of one invocation at a time, published through
 * the sink. The service's default dimension is `service`.
 */
export class Metrics {
  readonly #namespace: string;
  readonly #stored: { get(): StoredMetrics; reset(): void };
  readonly #disabled = metricsDisabled();
  /** Lambda's on-demand instances only: a provisioned instance's first call is not a cold start, and outside Lambda there are none. */
  #coldStart = process.env.AWS_LAMBDA_INITIALIZATION_TYPE?.trim() === 'on-demand';

  constructor(namespace: string, stored: { get(): StoredMetrics; reset(): void } = unscoped()) {
    this.#namespace = namespace;
    this.#stored = stored;
  }

  addMetric(name: string, unit: MetricUnit, value: number): this {
    store(this.#stored.get(), name, unit, value);
    return this;
  }

  addDimension(name: string, value: string): this {
    this.#stored.get().dimensions[name] = value;
    return this;
  }

  /** A dimension set of its own: the metrics are published under each set added, and under `service` alone for `{}`. */
  addDimensions(dimensions: Record<string, string>): this {
    this.#stored.get().dimensionSets.push(dimensions);
    return this;
  }

  serializeMetrics(): EmfOutput {
    return serialize(this.#namespace, { service: metricsService }, this.#stored.get());
  }

  /** Hands the document to the sink, if anything was added, and starts the next one. */
  publishStoredMetrics(): this {
    try {
      if (!this.#disabled && this.#stored.get().values.size > 0) sink(this.serializeMetrics());
    } finally {
      this.#stored.reset();
    }
    return this;
  }

  /** On an on-demand instance's first call only: a document of its own with ColdStart 1, under `service` and the function's name. */
  captureColdStartMetric(functionName?: string): void {
    if (!this.#coldStart) return;
    this.#coldStart = false;
    const single = new Metrics(this.#namespace);
    if (functionName?.trim()) single.addDimension('function_name', functionName.trim());
    single.addMetric('ColdStart', 'Count', 1).publishStoredMetrics();
  }
}

function unscoped(): { get(): StoredMetrics; reset(): void } {
  let stored = noMetrics();
  return { get: () => stored, reset: () => (stored = noMetrics()) };
}

const namespace = () => configSchema.shape.METRICS_NAMESPACE.parse(process.env.METRICS_NAMESPACE);

/** An instance of the service's namespace for documents published at once (read on its own, so metrics never depend on a valid configuration). */
export function createMetrics(): Metrics {
  return new Metrics(namespace());
}

let shared: Metrics | undefined;

/**
 * The process's instance. Its stored metrics are scoped to the invocation
 * (kept in Lambda's invoke store when invocations run concurrently, see
 * invocation.ts), so a Middy middleware publishes what one request added.
 */
export function metrics(): Metrics {
  shared ??= new Metrics(namespace(), invocationScoped('hatchery.metrics', noMetrics));
  return shared;
}

/** Adds one data point to the current invocation's document. */
export function addMetric(name: MetricName, value = 1): void {
  metrics().addMetric(name, metricCatalog[name].unit, value);
}

/** Publishes at once one document carrying an extra dimension (a reason, a kind), apart from the request's. */
export function publishWith(dimension: { name: 'reason' | 'kind'; value: string }, values: Partial<Record<MetricName, number>>): void {
  const single = createMetrics();
  single.addDimension(dimension.name, dimension.value);
  for (const [name, value] of Object.entries(values) as [MetricName, number][]) single.addMetric(name, metricCatalog[name].unit, value);
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
  const use = { ...databaseUse.get() };
  databaseUse.reset();
  return use;
}
