import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../db';
import { deadLetterQueue, deliveryQueue, type DeliveryJob } from './delivery';

/** Dead-lettered deliveries moved back to their endpoint's queue per transaction. */
const batch = 100;

/**
 * Sends an endpoint's dead-lettered deliveries again (`npm run webhooks --
 * redeliver`): each goes back to the endpoint's queue with a fresh retry
 * window, and leaves the dead letters in the same transaction, so none is
 * sent twice by two runs or lost by one that stops midway. Returns how many.
 */
export async function redeliverDeadLetters(
  session: Queryable,
  boss: Pick<PgBoss, 'fetch' | 'insert' | 'complete'>,
  endpoint: string,
  now = new Date(),
): Promise<number> {
  const db = { executeSql: (text: string, values?: unknown[]) => session.query(text, values) };
  let moved = 0;
  for (;;) {
    await session.query('BEGIN');
    try {
      const jobs = await boss.fetch<DeliveryJob>(deadLetterQueue(endpoint), { batchSize: batch, db });
      if (jobs.length) {
        await boss.insert(
          deliveryQueue(endpoint),
          jobs.map((job) => ({ data: { event: job.data.event, firstAttemptAt: now.toISOString(), failures: 0 } satisfies DeliveryJob })),
          { db },
        );
        await boss.complete(
          deadLetterQueue(endpoint),
          jobs.map((job) => job.id),
          null,
          { db },
        );
      }
      await session.query('COMMIT');
      moved += jobs.length;
      if (jobs.length < batch) return moved;
    } catch (error) {
      await session.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}

/** How many deliveries each endpoint has dead-lettered, by endpoint (those with none left out). */
export async function countDeadLetters(session: Queryable, schema: string): Promise<Record<string, number>> {
  const { rows } = await session.query<{ name: string; count: number }>(
    `SELECT name, count(*)::int AS count FROM ${schema}.job WHERE name LIKE $1 AND state IN ('created', 'retry') GROUP BY name ORDER BY name`,
    [deadLetterQueue('%')],
  );
  const prefix = deadLetterQueue('').slice(0, deliveryQueue('').length);
  return Object.fromEntries(rows.map((row) => [row.name.slice(prefix.length, row.name.length - (deadLetterQueue('').length - prefix.length)), row.count]));
}
