import { pooled } from './db';
import { AppError } from './errors';
import type { Health } from './health';
import type { Freshness } from './indexer/freshness';
import { currentFreshness } from './indexer/freshness-read';

/** GET /health waits this long for the database's answer before reporting it unreachable (503). */
export const healthTimeoutMs = 1_000;

const unreachable = () => new AppError('unavailable', `The database did not answer within ${healthTimeoutMs} ms.`);

/**
 * GET /health: the process answers, and the database answers one trivial
 * statement within `timeoutMs`; no retry, since a health check must report
 * what it sees now. Otherwise 503.
 */
export async function checkHealth(timeoutMs: number = healthTimeoutMs): Promise<Health> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ping = pooled.query('SELECT 1');
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
