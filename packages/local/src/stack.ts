import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import pg from 'pg';
import { config, configSchema } from '@hatchery/platform/config';
import { logger } from '@hatchery/platform/telemetry/logger';
import { closeDb } from '@hatchery/core/db';
import { indexerTable } from '@hatchery/core/indexer/names';
import { ensureTable } from '@hatchery/platform/aws/table';
import { setEmfSink } from '@hatchery/platform/telemetry/metrics';
import { migrate } from '@hatchery/core/migrate';
import { httpRoutes } from '@hatchery/functions/routes';
import { fanOutHandler, hubPath, wsRoutes } from '@hatchery/functions/routes/realtime';
import { Listener, type ListenerOptions } from '@hatchery/listener/listener';
import { loadDemoData, type DemoSize } from './demo-data';
import { startDynalite } from './dynamo';
import { lambdaApi, lambdaApiPath, type LambdaApi, type LocalFunction } from './gateway/lambda-api';
import { invokeStore } from './gateway/lambda';
import { managementApi, managementPath } from './gateway/management';
import { accountQuota, type AccountQuota } from './gateway/quota';
import { startGateway, type RunningGateway } from './gateway/server';
import { websocketApi, type WebSocketApi } from './gateway/websocket';
import { workerPool, type WorkerPool } from './gateway/workers';
import { localIdentityProvider, type LocalIdentityProvider } from './idp';
import { metricsRegistry, serveMetrics, type MetricsRegistry } from './metrics';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './postgres';
import { claimDataDir, StartupError } from './record';
import { localSettingsSchema, quotaSettings } from './settings';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';

export interface StackOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Where the embedded database and the identity provider's key live. */
  dataDir: string;
  /** Keep the embedded database between runs (npm start) or remove it on stop (tests). */
  persistent: boolean;
  /** An external PostgreSQL instead of the embedded one. */
  databaseUrl?: string;
  /** An external DynamoDB API instead of dynalite. */
  dynamoEndpoint?: string;
  /** Demo data to load when the indexer schema is absent; false loads none (start.ts: never on a database it was given, unless asked). */
  demoData: DemoSize | false;
  /** Copied instead of running initdb (see test/support/global-setup.ts). */
  postgresTemplateDir?: string;
  /** The in-process listener's timing; false runs none (tests that start their own). */
  listener?: Partial<Pick<ListenerOptions, 'pollMs' | 'reconnectMs' | 'fanOutConcurrency' | 'smallAudience' | 'budget'>> | false;
  /** Worker threads of the local Lambda service (default: one per core, at most one per shard). */
  fanOutWorkers?: number;
  /** More functions for the local Lambda service, by name (tests). */
  functions?: Record<string, LocalFunction>;
  /** The account's throttle the gateway models; by default HATCHERY_QUOTA_PER_SECOND and HATCHERY_QUOTA_BURST (off). */
  quota?: { perSecond: number; burst: number };
  /**
   * The management API every post and close of the stack goes through (the
   * listener's, the fan-out function's, $default's); by default the gateway's
   * own. Something put in front of the gateway (a recording or throttling
   * proxy) forwards to `<the stack's URL>/@connections`.
   */
  managementEndpoint?: string;
}

/** The fan-out function's name on the local Lambda service. */
export const localFanOutFunction = 'hatchery-fanout';

export interface RunningStack {
  url: string;
  databaseUrl: string;
  dynamoEndpoint: string;
  idp: LocalIdentityProvider;
  gateway: RunningGateway;
  /** The WebSocket side of the gateway (its live connections). */
  hub: WebSocketApi;
  /** The account's throttle as the gateway models it: its counts, and a change of rate (tests, the bench). */
  quota: AccountQuota;
  /** The local Lambda service the listener invokes the fan-out function through, and its worker threads. */
  lambda: LambdaApi;
  workers: WorkerPool;
  /** The in-process listener, unless disabled. */
  listener?: Listener;
  /** The embedded cluster, when one was started (tests stop and restart it). */
  postgres?: EmbeddedDatabase;
  /** The metrics the handlers and the listener printed in EMF, as /metrics serves them. */
  metrics: MetricsRegistry;
  stop(): Promise<void>;
}

async function withClient<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function hasIndexerSchema(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [indexerTable('editions')]);
  return rows[0]?.present ?? false;
}

/**
 * The whole product on one machine (docs/local-stack.md): a real
 * PostgreSQL, a real DynamoDB API, the local identity provider and the local
 * API Gateway driving the real handlers. `npm start` and the tests both boot it here.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    // Before any AWS SDK call asks for Lambda's invoke store, so the concurrent kind is the one there.
    invokeStore();
    const claim = await claimDataDir(options.dataDir);
    cleanups.push(claim.release);
    if (claim.orphanStopped) logger().warn({ pid: claim.orphanStopped }, 'stopped a PostgreSQL server that a killed Hatchery had left running on this data');
    // The handlers' and the listener's EMF documents, kept as CloudWatch keeps a Lambda's, for /metrics.
    const metrics = metricsRegistry();
    setEmfSink((document) => metrics.add(document));
    cleanups.push(async () => setEmfSink(undefined));

    // The configuration as a whole is read only once the stack has set its variables; these two are needed before.
    const projectId = configSchema.shape.IDP_PROJECT_ID.parse(process.env.IDP_PROJECT_ID);
    const idpKeyFile = join(options.dataDir, 'idp-key.json');
    const idp = await localIdentityProvider({ keyFile: idpKeyFile, projectId });

    // The port is taken first, so a conflict shows at once; until the stack is ready it answers 503 with Retry-After.
    let ready = false;
    const { HATCHERY_QUOTA_PER_SECOND, HATCHERY_QUOTA_BURST } = localSettingsSchema.shape;
    const quota = accountQuota(
      options.quota ??
        quotaSettings({
          HATCHERY_QUOTA_PER_SECOND: HATCHERY_QUOTA_PER_SECOND.parse(process.env.HATCHERY_QUOTA_PER_SECOND),
          HATCHERY_QUOTA_BURST: HATCHERY_QUOTA_BURST.parse(process.env.HATCHERY_QUOTA_BURST),
        }),
    );
    const hub = websocketApi({ path: hubPath, routes: wsRoutes, quota });
    // The workers share this process's environment, which the stack completes below, before any invocation.
    const workers = workerPool(options.fanOutWorkers);
    const lambda = lambdaApi(
      {
        [localFanOutFunction]: { handler: fanOutHandler, timeoutMs: functionTimeoutSeconds.fanOut * 1000, retries: deliveryDeadlines.shardRetries },
        ...options.functions,
      },
      workers,
      logger().child({ component: 'lambda-api' }),
    );
    const gateway = await startGateway({
      routes: Object.values(httpRoutes),
      port: options.port,
      ipRequestsPerSecond: configSchema.shape.IP_RATE_LIMIT_PER_SECOND.parse(process.env.IP_RATE_LIMIT_PER_SECOND),
      isReady: () => ready,
      quota,
      localEndpoints: {
        '/.well-known/jwks.json': (_request, response) => {
          response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
          response.end(JSON.stringify(idp.jwks));
        },
        [managementPath]: managementApi(hub.connections, quota),
        [lambdaApiPath]: lambda.endpoint,
        '/metrics': serveMetrics(metrics),
      },
      onUpgrade: hub.onUpgrade,
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') throw new StartupError(`port ${options.port} on 127.0.0.1 is in use; stop what uses it, or set PORT to a free port`);
      throw error;
    });
    cleanups.push(() => gateway.close());

    let postgres: EmbeddedDatabase | undefined;
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const started = await startEmbeddedPostgres({
        dataDir: options.dataDir,
        persistent: options.persistent,
        templateDir: options.postgresTemplateDir,
      });
      cleanups.push(() => started.stop());
      postgres = started;
      databaseUrl = started.urlFor('postgres');
    }

    let dynamoEndpoint = options.dynamoEndpoint;
    if (!dynamoEndpoint) {
      const dynamo = await startDynalite();
      cleanups.push(dynamo.stop);
      dynamoEndpoint = dynamo.endpoint;
    }

    // Registered after the databases so it runs before they stop: clients are closed while their $disconnect
    // handlers can still reach DynamoDB, and the pool is ended before PostgreSQL goes (no terminated-connection warnings).
    cleanups.push(async () => {
      await hub.close();
      await gateway.close();
      await closeDb();
    });
    // These run before the above: the fan-outs in flight finish while the gateway and DynamoDB are still up.
    cleanups.push(() => workers.close());
    cleanups.push(() => lambda.settled());

    const managementEndpoint = options.managementEndpoint ?? gateway.url;
    // The handlers run in this process and read their configuration from the environment, as in Lambda.
    Object.assign(process.env, {
      DATABASE_URL: databaseUrl,
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      IDP_PROJECT_ID: projectId,
      IDP_JWKS_URL: `${gateway.url}/.well-known/jwks.json`,
      WEBSOCKET_MANAGEMENT_ENDPOINT: managementEndpoint,
      FANOUT_FUNCTION_NAME: localFanOutFunction,
      LAMBDA_ENDPOINT: gateway.url,
      AWS_REGION: configSchema.shape.AWS_REGION.parse(process.env.AWS_REGION),
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    });

    await migrate(databaseUrl);
    const dynamoAdmin = new DynamoDBClient({ endpoint: dynamoEndpoint, region: config().AWS_REGION });
    await ensureTable(dynamoAdmin, config().DYNAMODB_TABLE);
    dynamoAdmin.destroy();
    const demoData = options.demoData;
    if (demoData) {
      await withClient(databaseUrl, async (client) => {
        if (!(await hasIndexerSchema(client))) await loadDemoData(client, demoData);
      });
    }

    let listener: Listener | undefined;
    if (options.listener !== false) {
      // The local Lambda service runs as many shards at once as it has worker threads: the budget is divided among those.
      const started = new Listener({ databaseUrl, managementEndpoint, shardConcurrency: workers.size, ...options.listener }).start();
      cleanups.push(() => started.stop());
      listener = started;
    }

    ready = true;
    await claim.update({ state: 'ready', url: gateway.url, databaseUrl, dynamoEndpoint, idpProjectId: projectId, idpKeyFile });

    return { url: gateway.url, databaseUrl, dynamoEndpoint, idp, gateway, hub, quota, lambda, workers, listener, postgres, metrics, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
