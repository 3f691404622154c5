import http from 'node:http';
import https from 'node:https';
import { setTimeout } from 'node:timers/promises';
import { PgBoss, type Job } from 'pg-boss';
import { coveredBlock } from '@hatchery/core/events/replay';
import { readFreshness } from '@hatchery/core/indexer/freshness-read';
import {
  deadLetterQueue,
  deliveryLimits,
  endpointHealth,
  deliveryQueue,
  dispatchEvents,
  jobSchema,
  nextStep,
  type DeliveryJob,
} from '@hatchery/core/webhooks/delivery';
import type { WebhookEndpoint } from '@hatchery/core/webhooks/endpoints';
import { postWebhook } from '@hatchery/core/webhooks/post';
import { webhookHeaders } from '@hatchery/core/webhooks/signature';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import { coalesce } from './coalesce';
import { sessionPool } from './leader-session';
import type { WebhookMetrics } from './metrics';

interface WebhookOptions {
  databaseUrl: string;
  endpoints: readonly WebhookEndpoint[];
  /** False on the local stack: private and loopback receivers are allowed there (docs/webhooks.md). */
  deployed: boolean;
  /** How long a delivery is tried again before it is dead-lettered (WEBHOOK_RETRY_HOURS). */
  retryWindowMs: number;
  log: Logger;
  metrics: WebhookMetrics;
}

export interface Webhooks {
  /** The log may have grown, or a finality moved: hand each endpoint what it now takes (the leader calls it). */
  dispatch(): void;
  /** Each endpoint's oldest delivery not yet done, its age in seconds (0 when none): the alarm's metric. */
  pendingAges(): Promise<Record<string, number>>;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The webhooks' workers and dispatch on pg-boss (docs/webhooks.md, "The
 * queue"). Every listener task works every endpoint's queue, leader and
 * standby alike; pg-boss gives each job to one worker, and one held by a task
 * that died to another once it expires. Each endpoint has its queue, its
 * workers and its sockets, so one that hangs or fails holds only its own.
 */
export async function startWebhooks(options: WebhookOptions): Promise<Webhooks> {
  const { endpoints, log, metrics } = options;
  // Each transactional worker holds a connection for its attempt; the rest fetch, settle and maintain.
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: jobSchema,
    max: endpoints.length * deliveryLimits.concurrency + 4,
    application_name: 'hatchery-listener-jobs',
    // The database's bound on a job's transaction left open by a task that stopped: set once per connection here, where
    // pg-boss would read pg_settings and set it in each job's transaction (most of the database's time per delivery).
    options: `-c idle_in_transaction_session_timeout=${(deliveryLimits.expireInSeconds + 5) * 1000}`,
    schedule: false,
    useListenNotify: true,
    // How soon a job held by a task that died is found expired and given to another: its expiry plus at most this.
    superviseIntervalSeconds: deliveryLimits.superviseSeconds,
    monitorIntervalSeconds: deliveryLimits.superviseSeconds,
    maintenanceIntervalSeconds: deliveryLimits.cleanupSeconds,
  });
  boss.on('error', (error) => log.warn({ err: error }, 'the job queue reported an error'));
  await boss.start();
  for (const endpoint of endpoints) {
    // Failures the worker settles itself (retried or dead-lettered); pg-boss's own retries cover only a worker that died holding a job.
    await boss.createQueue(deliveryQueue(endpoint.name), {
      // A table of its own: a long queue of one endpoint (one down for hours) never lengthens another's fetches and scans.
      partition: true,
      retryLimit: 100,
      retryDelay: 1,
      expireInSeconds: deliveryLimits.expireInSeconds,
      retentionSeconds: Math.ceil(options.retryWindowMs / 1000) * 2,
      // A delivery done is the log's and the metrics' to tell: its job goes soon, so the table holds little beyond what is pending.
      deleteAfterSeconds: deliveryLimits.keepDoneSeconds,
      notify: true,
    });
    await boss.createQueue(deadLetterQueue(endpoint.name), { retentionSeconds: 365 * 86_400 });
  }

  const sessions = sessionPool(options.databaseUrl, '-webhooks', { max: endpoints.length + 1, idleTimeoutMillis: 10_000 }, log);

  for (const endpoint of endpoints) {
    const agent = endpoint.url.startsWith('https:')
      ? new https.Agent({ keepAlive: true, maxSockets: deliveryLimits.concurrency })
      : new http.Agent({ keepAlive: true, maxSockets: deliveryLimits.concurrency });
    const queue = deliveryQueue(endpoint.name);
    const workOptions = {
      batchSize: deliveryLimits.batch,
      transactional: true,
      transactionTimeoutSeconds: 0,
      pollingIntervalSeconds: 1,
      notifyPollingIntervalSeconds: 5,
      // While a fetch comes back full there is a backlog: fetch again at once rather than after the poll.
      burstWhenBatchFull: true,
    } as const;
    // A batch's attempts run at once and settle in the one transaction pg-boss holds the batch in: the database's cost
    // of a delivery (fetch, begin, complete, commit) is shared by the batch. Every job of it completes; one that failed
    // is queued again, or dead-lettered, in that transaction.
    const health = endpointHealth();
    for (let worker = 0; worker < deliveryLimits.concurrency / deliveryLimits.batch; worker++) {
      await boss.work<DeliveryJob, void, typeof workOptions>(queue, workOptions, async (jobs, tx) => {
        const pauseMs = health.pauseMs();
        if (pauseMs) await setTimeout(pauseMs);
        const steps = await Promise.all(jobs.map((job) => attempt(endpoint, job, agent, options)));
        health.settled(steps.some((step) => step.kind === 'done'));
        for (const [index, step] of steps.entries()) {
          const eventId = jobs[index]!.data.event.id;
          if (step.kind === 'done') metrics.delivered(endpoint.name);
          else if (step.kind === 'retry') {
            metrics.failedAttempt(endpoint.name);
            await boss.send(queue, step.job, { startAfter: Math.ceil(step.delayMs / 1000), db: tx });
            log.info(
              { endpoint: endpoint.name, eventId, failures: step.job.failures, reason: step.job.lastFailure, retryInMs: step.delayMs },
              'webhook delivery failed; it is tried again',
            );
          } else {
            metrics.failedAttempt(endpoint.name);
            metrics.deadLettered(endpoint.name);
            await boss.send(deadLetterQueue(endpoint.name), step.job, { db: tx });
            log.error(
              { endpoint: endpoint.name, eventId, failures: step.job.failures, reason: step.job.lastFailure },
              'webhook delivery dead-lettered after its retry window',
            );
          }
        }
      });
    }
  }

  // Each endpoint hands on in its own session and its own transaction: one whose queue is long or whose table is busy
  // never holds back another's.
  const dispatches = endpoints.map((endpoint) =>
    coalesce(async () => {
      try {
        const client = await sessions.connect();
        try {
          const covered = endpoint.finality === 'latest' ? undefined : coveredBlock(await readFreshness(client), endpoint.finality);
          // pg-boss's NOTIFY (each queue's `notify`) wakes every task's workers for what this hands them.
          await dispatchEvents(client, boss, endpoint, covered);
        } finally {
          client.release();
        }
      } catch (error) {
        log.warn({ err: error, endpoint: endpoint.name }, 'webhook dispatch failed; the next one hands on from the same position');
      }
    }),
  );
  const dispatchesIdle = async () => {
    await Promise.all(dispatches.map((dispatch) => dispatch.idle()));
  };

  return {
    dispatch: () => {
      for (const dispatch of dispatches) dispatch.trigger();
    },
    async pendingAges() {
      const { rows } = await sessions.query<{ name: string; age: number | null }>(
        `SELECT name, extract(epoch FROM now() - min((data->>'firstAttemptAt')::timestamptz))::float AS age
         FROM ${jobSchema}.job WHERE name = ANY($1) AND state IN ('created', 'retry', 'active') GROUP BY name`,
        [endpoints.map((endpoint) => deliveryQueue(endpoint.name))],
      );
      const ages = Object.fromEntries(endpoints.map((endpoint) => [endpoint.name, 0]));
      for (const row of rows) ages[row.name.slice(deliveryQueue('').length)] = Math.max(0, row.age ?? 0);
      return ages;
    },
    idle: dispatchesIdle,
    async stop() {
      await dispatchesIdle();
      // Attempts in flight finish (or their jobs expire and go to another task); none starts after this.
      await boss.stop({ graceful: true, timeout: deliveryLimits.timeoutMs + 5_000 });
      await sessions.end().catch(() => undefined);
    },
  };
}

/** One attempt: the event as JSON, signed with each of the endpoint's secrets, posted with its bounds. */
async function attempt(endpoint: WebhookEndpoint, job: Job<DeliveryJob>, agent: http.Agent, options: WebhookOptions) {
  const body = JSON.stringify(job.data.event);
  const outcome = await postWebhook({
    url: endpoint.url,
    body,
    headers: { ...webhookHeaders({ id: job.data.event.id, timestamp: new Date(), body, secrets: endpoint.secrets }) },
    allowPrivate: !options.deployed,
    connectTimeoutMs: deliveryLimits.connectTimeoutMs,
    timeoutMs: deliveryLimits.timeoutMs,
    maxResponseBytes: deliveryLimits.maxResponseBytes,
    agent,
  });
  return nextStep(job.data, outcome, new Date(), options.retryWindowMs);
}
