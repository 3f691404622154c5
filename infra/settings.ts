import { configSchema, linkedResources } from '@hatchery/platform/config';
import { webhookSecretNames } from '@hatchery/platform/config/events';
import * as z from '@hatchery/platform/schema';
import { allEventTypes } from '@hatchery/core/events/catalogue';
import { checkEndpointAddresses, parseEndpoints, type WebhookEndpoint } from '@hatchery/core/webhooks/endpoints';

const flag = z.pipe(
  z._default(z.enum(['true', 'false']), 'false'),
  z.transform((value: 'true' | 'false') => value === 'true'),
);

/**
 * What a platform team may choose per deploy, read from the environment of
 * `sst deploy` (docs/deploying.md). Everything else about the design
 * is fixed in infra/.
 */
const settingsSchema = z.object({
  /** The schema the indexer writes (Ponder's --schema, or --views-schema with the views pattern); its channel is <schema>_live_query. */
  INDEXER_SCHEMA: configSchema.shape.INDEXER_SCHEMA,
  /** Per client IP, as the local gateway's limit: the same variable and the same default. */
  IP_RATE_LIMIT_PER_SECOND: configSchema.shape.IP_RATE_LIMIT_PER_SECOND,
  /** Steady rate of each API's stage, across all clients (API Gateway throttling); bursts may reach twice this. */
  API_RATE_LIMIT_PER_SECOND: z._default(z.coerce.number().check(z.int(), z.gte(1)), 1000),
  /** `ec2` trades the managed NAT gateways (about $32 a month each) for small NAT instances. */
  HATCHERY_NAT: z._default(z.enum(['managed', 'ec2']), 'managed'),
  /** The fan-out budget and the least time between broadcasts: the listener's variables, the same defaults (their reasons are there). */
  FANOUT_POSTS_PER_SECOND: configSchema.shape.FANOUT_POSTS_PER_SECOND,
  FANOUT_MIN_INTERVAL_MS: configSchema.shape.FANOUT_MIN_INTERVAL_MS,
  /** A second listener task as a warm standby; the advisory lock lets only one fan out. */
  HATCHERY_LISTENER_STANDBY: flag,
  /** The event log's retention and the webhooks' retry window: the listener's variables, the same defaults. */
  EVENT_RETENTION_DAYS: configSchema.shape.EVENT_RETENTION_DAYS,
  WEBHOOK_RETRY_HOURS: configSchema.shape.WEBHOOK_RETRY_HOURS,
  /** The stage's webhook endpoints, a JSON array of `{ name, url, types, finality }`: their secrets are SST secrets, never in this. */
  HATCHERY_WEBHOOKS: z.optional(z.string()),
  /** docs/operating.md, Alarms: the alarms' thresholds, and who is emailed when one fires. */
  HATCHERY_ALARM_EMAIL: z.optional(z.email()),
  HATCHERY_ALARM_5XX_RATE: z._default(z.coerce.number().check(z.gte(0), z.lte(1)), 0.05),
  HATCHERY_ALARM_P99_LATENCY_MS: z._default(z.coerce.number().check(z.positive()), 2000),
  HATCHERY_ALARM_LAMBDA_ERRORS: z._default(z.coerce.number().check(z.int(), z.gte(0)), 0),
  HATCHERY_ALARM_LAMBDA_THROTTLES: z._default(z.coerce.number().check(z.int(), z.gte(0)), 0),
  HATCHERY_ALARM_HEARTBEAT_MINUTES: z._default(z.coerce.number().check(z.int(), z.gte(1)), 3),
  HATCHERY_ALARM_LISTENER_LAG_MS: z._default(z.coerce.number().check(z.positive()), 10_000),
  HATCHERY_ALARM_UNDELIVERED_POSTS: z._default(z.coerce.number().check(z.nonnegative()), 0),
  /** The indexer's lag behind its chain (the listener's IndexerLag, from Ponder's checkpoint) that alarms; a chain's block time sets its floor. */
  HATCHERY_ALARM_INDEXER_LAG_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(1)), 300),
  HATCHERY_ALARM_DB_CONNECTIONS_PERCENT: z._default(z.coerce.number().check(z.gte(1), z.lte(100)), 80),
  HATCHERY_ALARM_WEBHOOK_PENDING_MINUTES: z._default(z.coerce.number().check(z.int(), z.gte(1)), 15),
});

/** A webhook endpoint as a stage declares it: its secrets are the stage's SST secrets (infra/webhooks.ts). */
type DeclaredEndpoint = Omit<WebhookEndpoint, 'secrets'>;

export interface DeploySettings {
  ipRequestsPerSecond: number;
  stageRequestsPerSecond: number;
  nat: 'managed' | 'ec2';
  indexerSchema: string;
  listenerTasks: number;
  /** PostToConnection calls a second for all posts together (0: no budget), and the least milliseconds between broadcasts. */
  fanOut: { postsPerSecond: number; minIntervalMs: number };
  /** How long the event log keeps an event. */
  eventRetentionDays: number;
  /** The endpoints HATCHERY_WEBHOOKS declares, held to a deployed stage's rules, and how long a delivery is tried again. */
  webhooks: { endpoints: DeclaredEndpoint[]; retryHours: number };
  /**
   * The stage uses the database named by the DatabaseUrl secret (the one the
   * indexer writes) instead of creating one. SST hands a stage's secrets to
   * the config as SST_SECRET_<Name>, so the choice is kept with the stage.
   */
  existingDatabase: boolean;
  alarms: {
    email?: string;
    http5xxRate: number;
    p99LatencyMs: number;
    lambdaErrors: number;
    lambdaThrottles: number;
    heartbeatMinutes: number;
    listenerLagMs: number;
    /** Posts of one kind of event not delivered in a minute above which the alarm fires. */
    undeliveredPosts: number;
    indexerLagSeconds: number;
    databaseConnectionsPercent: number;
    /** Minutes an endpoint's oldest pending delivery may wait before its alarm fires. */
    webhookPendingMinutes: number;
  };
}

export function deploySettings(env: NodeJS.ProcessEnv = process.env): DeploySettings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid deploy settings: ${parsed.error.issues.map((problem) => `${problem.path.join('.')}: ${problem.message}`).join('; ')}`);
  }
  const settings = parsed.data;
  return {
    ipRequestsPerSecond: settings.IP_RATE_LIMIT_PER_SECOND,
    stageRequestsPerSecond: settings.API_RATE_LIMIT_PER_SECOND,
    nat: settings.HATCHERY_NAT,
    indexerSchema: settings.INDEXER_SCHEMA,
    listenerTasks: settings.HATCHERY_LISTENER_STANDBY ? 2 : 1,
    fanOut: { postsPerSecond: settings.FANOUT_POSTS_PER_SECOND, minIntervalMs: settings.FANOUT_MIN_INTERVAL_MS },
    eventRetentionDays: settings.EVENT_RETENTION_DAYS,
    webhooks: { endpoints: declaredEndpoints(settings.HATCHERY_WEBHOOKS, env), retryHours: settings.WEBHOOK_RETRY_HOURS },
    existingDatabase: env[`SST_SECRET_${linkedResources.DATABASE_URL.name}`] !== undefined,
    alarms: {
      email: settings.HATCHERY_ALARM_EMAIL,
      http5xxRate: settings.HATCHERY_ALARM_5XX_RATE,
      p99LatencyMs: settings.HATCHERY_ALARM_P99_LATENCY_MS,
      lambdaErrors: settings.HATCHERY_ALARM_LAMBDA_ERRORS,
      lambdaThrottles: settings.HATCHERY_ALARM_LAMBDA_THROTTLES,
      heartbeatMinutes: settings.HATCHERY_ALARM_HEARTBEAT_MINUTES,
      listenerLagMs: settings.HATCHERY_ALARM_LISTENER_LAG_MS,
      undeliveredPosts: settings.HATCHERY_ALARM_UNDELIVERED_POSTS,
      indexerLagSeconds: settings.HATCHERY_ALARM_INDEXER_LAG_SECONDS,
      databaseConnectionsPercent: settings.HATCHERY_ALARM_DB_CONNECTIONS_PERCENT,
      webhookPendingMinutes: settings.HATCHERY_ALARM_WEBHOOK_PENDING_MINUTES,
    },
  };
}

/** The deploy's error about HATCHERY_WEBHOOKS, which the listener reads as WEBHOOK_ENDPOINTS (the name the rules' own messages give it). */
const webhooksRefused = (reason: string) => new Error(`Invalid deploy settings: HATCHERY_WEBHOOKS (the listener's WEBHOOK_ENDPOINTS): ${reason}`);

/**
 * Stands for an endpoint's current secret while the stage has none, so that the rest of the declaration is checked:
 * the secret's own sst.Secret, which has no default, then stops the deploy and names it.
 */
const unsetSecret = `whsec_${Buffer.alloc(32).toString('base64')}`;

/**
 * The endpoints HATCHERY_WEBHOOKS declares, held to the rules the listener holds them to on a deployed stage (https://
 * only, no private, loopback, link-local or metadata address), with the stage's own secrets: SST hands the deploy
 * each as SST_SECRET_<Name>, so a malformed one, or a next equal to the current, stops the deploy rather than the
 * listener. A secret written into the setting is refused: it would sit in the task definition and the deploy's logs.
 */
function declaredEndpoints(json: string | undefined, env: NodeJS.ProcessEnv): DeclaredEndpoint[] {
  const inline = endpointsWithInlineSecrets(json);
  if (inline.length > 0)
    throw webhooksRefused(
      inline
        .map((name) => `endpoint ${name} writes its secrets into the setting; set them as the stage's SST secrets (docs/deploying.md, Webhooks)`)
        .join('; '),
    );
  const linkedSecrets = (name: string) => {
    const { current, next } = webhookSecretNames(name);
    return [env[`SST_SECRET_${current}`] ?? unsetSecret, env[`SST_SECRET_${next}`]].filter((secret): secret is string => secret !== undefined && secret !== '');
  };
  let endpoints: WebhookEndpoint[];
  try {
    endpoints = parseEndpoints(json, { deployed: true, knownTypes: allEventTypes, linkedSecrets });
  } catch (error) {
    throw webhooksRefused((error as Error).message);
  }
  const owners = new Map<string, string>();
  for (const { name } of endpoints) {
    for (const secret of Object.values(webhookSecretNames(name))) {
      const owner = owners.get(secret);
      if (owner) throw webhooksRefused(`endpoints ${JSON.stringify(owner)} and ${JSON.stringify(name)} would share the SST secret ${secret}: rename one`);
      owners.set(secret, name);
    }
  }
  return endpoints.map(({ secrets: _secrets, ...declared }) => declared);
}

/** The names (or positions) of the declared endpoints that carry `secrets`; none when the setting is not a JSON array, which parseEndpoints reports. */
function endpointsWithInlineSecrets(json: string | undefined): string[] {
  let declared: unknown;
  try {
    declared = JSON.parse(json ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(declared)) return [];
  return declared.flatMap((endpoint: unknown, index) => {
    if (endpoint === null || typeof endpoint !== 'object' || !('secrets' in endpoint)) return [];
    const { name } = endpoint as { name?: unknown };
    return [typeof name === 'string' ? JSON.stringify(name) : `#${index + 1}`];
  });
}

/**
 * Refuses a declared endpoint whose host name resolves, from the deploying machine, to an address a deployed stage
 * refuses (`localhost`, an internal name). The listener checks every address it connects to again.
 */
export async function checkWebhookAddresses(settings: DeploySettings): Promise<void> {
  try {
    await checkEndpointAddresses(settings.webhooks.endpoints, { deployed: true });
  } catch (error) {
    throw webhooksRefused((error as Error).message);
  }
}

/** API Gateway stage throttling (a stage's defaultRouteSettings): the steady rate and a burst of twice that, as the local limiter allows. */
export function stageThrottling(settings: DeploySettings): { throttlingRateLimit: number; throttlingBurstLimit: number } {
  return { throttlingRateLimit: settings.stageRequestsPerSecond, throttlingBurstLimit: settings.stageRequestsPerSecond * 2 };
}
