import { config } from '@hatchery/platform/config';
import { logger, type Logger } from '@hatchery/platform/telemetry/logger';
import { connectionShards, connectionStore, type ConnectionStore } from '@hatchery/core/realtime/connections';
import { fanOutLimits } from '@hatchery/core/realtime/fan-out';
import { summaryLimits } from '@hatchery/core/indexer/summary-store';
import type { FanOutBudget } from '@hatchery/core/realtime/budget';
import { deliveryLedger, type DeliveryLedger } from '@hatchery/core/realtime/ledger';
import { managementConnections, type HubConnections } from '@hatchery/platform/aws/management';
import type { DeliveryCounters } from './broadcaster';
import { functionShards, inProcessShards, type ShardInvoker } from './shards';
import { dynamoStateStore, type StateStore } from './state';
import type { SummaryTiming } from './summary';
import type { EventLogTiming } from './event-log';
import type { AppendOutcome } from '@hatchery/core/events/log-writer';
import { allEventTypes } from '@hatchery/core/events/catalogue';
import { parseEndpoints, type WebhookEndpoint } from '@hatchery/core/webhooks/endpoints';
import { webhookSecretNames } from '@hatchery/platform/config/events';
import { sstLinks } from '@hatchery/platform/config/environment';

/** The listener's defaults for pollMs and reconnectMs. */
const pollMs = 5_000;
const reconnectMs = 5_000;
/** How often the leader deletes the events past retention: often enough that a day's expiry is a few small batches. */
const retentionSweepMs = 10 * 60_000;
/** A reorg's revert of an owner, which no notification names, is noticed within this. */
const ownersMaxIntervalMs = 60_000;

/**
 * Audiences up to this size the listener posts itself, sparing the hop to the fan-out function: a shard of at most
 * `smallAudience / connectionShards` records is posted by the listener, any larger one by a shard invocation.
 */
const smallAudience = 512;

export interface ListenerOptions {
  databaseUrl: string;
  /** The management API (`/@connections`) events are posted through. */
  managementEndpoint: string;
  /** Fallback re-read interval, also how often a standby asks for the lock. */
  pollMs: number;
  /** Wait after a lost or refused database connection. */
  reconnectMs: number;
  /** Posts in flight per lane, and so the sockets of each lane's client. */
  fanOutConcurrency: number;
  /** Broadcasts up to this size the listener posts itself (`smallAudience` by default). */
  smallAudience: number;
  store: ConnectionStore;
  /** Where the listener's own broadcast posts go. */
  connections: HubConnections;
  /** Where forgeFulfilled goes: a socket pool of its own, so it never queues behind a broadcast. */
  forgeConnections: HubConnections;
  /** Who posts a large broadcast's shards: the fan-out function when FANOUT_FUNCTION_NAME names one, else the listener itself. */
  shards: ShardInvoker;
  /** How many shards `shards` posts at once (the local stack's worker threads; in AWS every shard has an invocation of its own). */
  shardConcurrency: number;
  /** All posts' rate and the least time between broadcasts (FANOUT_POSTS_PER_SECOND, FANOUT_MIN_INTERVAL_MS). */
  budget: FanOutBudget;
  state: StateStore;
  /** What the fan-out has claimed, so nothing is posted twice (core/realtime/ledger.ts). */
  ledger: DeliveryLedger;
  /** How often the leader sums the transparency summary's row; see summaryLimits.refresh. */
  summary: SummaryTiming;
  /** How long the event log keeps events, and how often it deletes the expired. */
  eventLog: EventLogTiming;
  /** After each pass that wrote the event log. */
  eventsWritten: (outcome: AppendOutcome) => void;
  /** The stage's webhook endpoints (WEBHOOK_ENDPOINTS, their secrets linked on a deployed stage), and how they are held to. */
  webhooks: { endpoints: WebhookEndpoint[]; deployed: boolean; retryWindowMs: number };
  log: Logger;
}

export interface ListenerStats extends DeliveryCounters {
  leader: boolean;
  /** Database sessions opened (1 + reconnections). */
  sessions: number;
  notifications: number;
  /** Reads of the forge requests. */
  reads: number;
  /** Reads of the listings snapshot. */
  marketReads: number;
  /** Reads that failed for a reason other than a missing table. */
  failedReads: number;
  /** Sums of the transparency summary stored, and those that failed. */
  summaries: number;
  failedSummaries: number;
  /** Events the log appended, retractions it appended, and its passes that failed. */
  eventsAppended: number;
  eventsReverted: number;
  failedEventPasses: number;
}

/** The listener's options: those given, the rest from the configuration and limits. */
export function listenerOptions(options: Partial<ListenerOptions>): ListenerOptions {
  const managementEndpoint = options.managementEndpoint ?? config().WEBSOCKET_MANAGEMENT_ENDPOINT;
  if (!managementEndpoint) throw new Error('The listener needs WEBSOCKET_MANAGEMENT_ENDPOINT (the WebSocket API management endpoint).');
  const fanOutConcurrency = options.fanOutConcurrency ?? fanOutLimits.concurrency;
  const store = options.store ?? connectionStore();
  const ledger = options.ledger ?? deliveryLedger();
  const connections = options.connections ?? managementConnections(managementEndpoint, fanOutConcurrency, 'broadcast');
  const log = options.log ?? logger().child({ component: 'listener' });
  const functionName = config().FANOUT_FUNCTION_NAME;
  return {
    databaseUrl: options.databaseUrl ?? config().DATABASE_URL,
    managementEndpoint,
    pollMs: options.pollMs ?? pollMs,
    reconnectMs: options.reconnectMs ?? reconnectMs,
    fanOutConcurrency,
    smallAudience: options.smallAudience ?? smallAudience,
    store,
    connections,
    forgeConnections: options.forgeConnections ?? managementConnections(managementEndpoint, fanOutConcurrency, 'forge'),
    shards:
      options.shards ?? (functionName ? functionShards(functionName) : inProcessShards({ store, connections, concurrency: fanOutConcurrency, log }, ledger)),
    shardConcurrency: options.shardConcurrency ?? connectionShards,
    budget: options.budget ?? { postsPerSecond: config().FANOUT_POSTS_PER_SECOND, minIntervalMs: config().FANOUT_MIN_INTERVAL_MS },
    state: options.state ?? dynamoStateStore(),
    ledger,
    summary: options.summary ?? summaryLimits.refresh,
    eventLog: options.eventLog ?? { retentionMs: config().EVENT_RETENTION_DAYS * 86_400_000, sweepMs: retentionSweepMs, ownersMaxIntervalMs },
    eventsWritten: options.eventsWritten ?? (() => undefined),
    webhooks: options.webhooks ?? configuredWebhooks(),
    log,
  };
}

/** The endpoints the configuration declares, each one's secrets taken from its linked SST secrets when it declares none. */
function configuredWebhooks(): ListenerOptions['webhooks'] {
  const deployed = config().WEBHOOK_DEPLOYED === 'true';
  const links = sstLinks();
  const linkedSecrets = (name: string) =>
    Object.values(webhookSecretNames(name))
      .map((secret) => (links[secret] as { value?: unknown } | undefined)?.value)
      .filter((value): value is string => typeof value === 'string' && value !== '');
  const endpoints = parseEndpoints(config().WEBHOOK_ENDPOINTS, { deployed, knownTypes: allEventTypes, linkedSecrets });
  return { endpoints, deployed, retryWindowMs: config().WEBHOOK_RETRY_HOURS * 3_600_000 };
}
