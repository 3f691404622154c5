import { db } from './db';
import { AppError } from './errors';
import { limits } from './limits';
import { currentFreshness, freshnessSchema, type Freshness } from './indexer/freshness';
import * as z from './schema';

export const healthSchema = z.object({
  status: z.literal('ok'),
  database: z.literal('ok'),
  indexer: freshnessSchema.check(z.describe("How far the indexer has got on each chain, from Ponder's checkpoint; `unknown` without Ponder's tables.")),
});

export type Health = z.infer<typeof healthSchema>;

const unreachable = () => new AppError('unavailable', `The database did not answer within ${limits.healthTimeoutMs} ms.`);

/**
 * GET /health: the process answers, and the database answers one trivial
 * statement within `timeoutMs`; no retry, since a health check must report
 * what it sees now. Otherwise 503.
 */
export async function checkHealth(timeoutMs: number = limits.healthTimeoutMs): Promise<Health> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ping = db().query('SELECT 1');
  // The indexer's position is reported, never a reason to fail: the database's answer above is.
  const indexer = currentFreshness().catch((): Freshness => 'unknown');
  // Once the timeout has answered, a late failure of the ping has no one to tell.
  ping.catch(() => undefined);
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(unreachable()), timeoutMs);
  });
  try {
    await Promise.race([Promise.all([ping, indexer]), timeout]);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw unreachable();
  } finally {
    clearTimeout(timer);
  }
  return { status: 'ok', database: 'ok', indexer: await indexer };
}
