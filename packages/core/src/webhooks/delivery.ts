import type { Queryable } from '../db';
import { AppError } from '../errors';
import { readEvents, positionOf, type LoggedEvent } from '../events/replay';
import type { WebhookEndpoint } from './endpoints';
import type { PostOutcome } from './post';
import { isExpired, nextAttemptDelayMs } from './retry-schedule';

/**
 * Webhook deliveries as jobs of pg-boss in the service's database (docs/
 * webhooks.md): the dispatch hands each event an endpoint takes to that
 * endpoint's queue, in the same transaction that moves the endpoint's
 * position in the log, so none is handed twice or skipped; a worker takes a
 * job, posts it, and settles it in the transaction pg-boss holds the job in.
 */

/** pg-boss's tables: a schema of their own beside the service's. */
export const jobSchema = 'hatchery_jobs';

/** Each endpoint's own queue, so a slow or failing one holds only its own workers. */
export const deliveryQueue = (endpoint: string) => `webhook.${endpoint}`;
/** Where an endpoint's deliveries go once their retry window has passed, until `npm run webhooks -- redeliver` sends them again. */
export const deadLetterQueue = (endpoint: string) => `webhook.${endpoint}.dead`;

export const deliveryLimits = {
  connectTimeoutMs: 3_000,
  /** A whole attempt, the answer included: beyond it the outcome is unknown and the event is sent again. */
  timeoutMs: 10_000,
  /** Of an answer, only this much is read: a receiver's status is all that counts. */
  maxResponseBytes: 4_096,
  /** Attempts in flight per endpoint and process. */
  concurrency: 16,
  /** Jobs a worker takes at once, attempted together and settled in one transaction. */
  batch: 8,
  /** Batches in a row with no delivery after which an endpoint counts as down. */
  downAfterBatches: 3,
  /** How long a worker of an endpoint that is down waits before each batch's attempts (within its expiry). */
  downPauseMs: 5_000,
  /** A job held this long by a worker that died is given to another (pg-boss's expiry): twice an attempt's longest. */
  expireInSeconds: 20,
  /** How often expired jobs are looked for. */
  superviseSeconds: 5,
  /** How long a delivery done stays in its queue's table, and how often those past it are deleted. */
  keepDoneSeconds: 3_600,
  cleanupSeconds: 300,
  /** Events handed to a queue in one transaction. */
  dispatchBatch: 500,
} as const;

/** A delivery job: the event as the log holds it, so a retry sends the same body even after retention deleted it. */
export interface DeliveryJob {
  event: LoggedEvent;
  /** When the first attempt was due (ISO 8601): the retry window runs from it. */
  firstAttemptAt: string;
  /** Failed attempts so far. */
  failures: number;
  /** Why the last attempt failed, in a few words (a status, a network error): never the answer's body. */
  lastFailure?: string;
}

/** What a job becomes after an attempt: done, tried again after a delay, or dead-lettered. */
type NextStep = { kind: 'done' } | { kind: 'retry'; job: DeliveryJob; delayMs: number } | { kind: 'dead'; job: DeliveryJob };

/**
 * After an attempt: a 2xx is done; anything else (refused, unknown, unsent)
 * is tried again with the same webhook-id after the backoff, or Retry-After
 * if it asks for longer, unless the retry window would pass first.
 */
export function nextStep(job: DeliveryJob, outcome: PostOutcome, now: Date, retryWindowMs: number, random: () => number = Math.random): NextStep {
  if (outcome.kind === 'delivered') return { kind: 'done' };
  const failures = job.failures + 1;
  const failed: DeliveryJob = { ...job, failures, lastFailure: outcome.reason };
  const delayMs = nextAttemptDelayMs({ attempt: failures, retryAfterMs: outcome.kind === 'refused' ? outcome.retryAfterMs : undefined, random });
  const expired = isExpired({ firstAttemptAt: new Date(job.firstAttemptAt), now: new Date(now.getTime() + delayMs), retryWindowMs });
  return expired ? { kind: 'dead', job: failed } : { kind: 'retry', job: failed, delayMs };
}

/** The part of pg-boss the dispatch uses: an insert that takes the dispatch's own transaction. */
interface JobInserter {
  insert(
    name: string,
    jobs: { data: DeliveryJob }[],
    options: { db: { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } },
  ): Promise<unknown>;
}

/**
 * Hands an endpoint's queue every event of the log after its position that
 * it takes (its types, at its finality: `covered` is that finality's block),
 * and moves its position on, in one transaction on `session`. An endpoint
 * new to the log starts at its end: what came before is replayed by GET
 * /events, not delivered. Returns how many events it handed.
 */
export async function dispatchEvents(
  session: Queryable,
  boss: JobInserter,
  endpoint: Pick<WebhookEndpoint, 'name' | 'types' | 'finality'>,
  covered: string | undefined,
  now: Date = new Date(),
): Promise<number> {
  const db = { executeSql: (text: string, values?: unknown[]) => session.query(text, values) };
  await session.query('BEGIN');
  try {
    await session.query(
      `INSERT INTO hatchery.webhook_dispatch (endpoint, position) SELECT $1, coalesce((SELECT last_position FROM hatchery.event_log), 0)
       ON CONFLICT (endpoint) DO NOTHING`,
      [endpoint.name],
    );
    const { rows } = await session.query<{ position: string }>(
      'SELECT position::text AS position FROM hatchery.webhook_dispatch WHERE endpoint = $1 FOR UPDATE',
      [endpoint.name],
    );
    let after = Number(rows[0]?.position ?? 0);
    let handed = 0;
    for (;;) {
      const page = await readEvents(session, { after, types: endpoint.types, finality: endpoint.finality, limit: deliveryLimits.dispatchBatch }, covered).catch(
        (error: unknown) => {
          // Retention took events this endpoint never had (its dispatch stood still that long): it goes on from the oldest kept.
          if (error instanceof AppError && error.kind === 'gone') return { items: [], nextCursor: String(error.extensions?.oldestCursor), hasMore: true };
          throw error;
        },
      );
      if (page.items.length)
        await boss.insert(
          deliveryQueue(endpoint.name),
          page.items.map((event) => ({ data: { event, firstAttemptAt: now.toISOString(), failures: 0 } })),
          { db },
        );
      handed += page.items.length;
      after = positionOf(page.nextCursor) ?? after;
      if (!page.hasMore) break;
    }
    await session.query('UPDATE hatchery.webhook_dispatch SET position = $2, updated_at = now() WHERE endpoint = $1', [endpoint.name, after]);
    await session.query('COMMIT');
    return handed;
  } catch (error) {
    await session.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Whether an endpoint is down: after a few batches in a row delivered nothing, each batch waits before its attempts,
 * so a receiver that is down costs its retries' pace, not the database's and the machine's whole capacity, which the
 * other endpoints, the hub and the reads share. One delivery brings it back at once.
 */
export function endpointHealth() {
  let failedBatches = 0;
  return {
    pauseMs: () => (failedBatches >= deliveryLimits.downAfterBatches ? deliveryLimits.downPauseMs : 0),
    settled(delivered: boolean) {
      failedBatches = delivered ? 0 : failedBatches + 1;
    },
  };
}
