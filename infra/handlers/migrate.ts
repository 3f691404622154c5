import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseSettings } from '@hatchery/platform/config/database';
import { isTransient, retryDelayMs } from '@hatchery/core/db';
import { migrate } from '@hatchery/core/migrate';
import { migrationsBundleDir } from './bundle-layout';

/**
 * How long the migrator keeps trying to reach the database: RDS Proxy accepts
 * connections a while before its first target registers. Inside the
 * migrator's 5-minute timeout (infra/functions.ts).
 */
const migrationConnectWindowMs = 4 * 60_000;

/**
 * Applies the migrations, trying again while the database is unreachable or
 * not yet serving (a first deploy's RDS Proxy without a registered target),
 * until `windowMs` has passed; any other failure is final at once.
 */
async function migrateWhenReachable(apply: () => Promise<void>, windowMs: number, log: (line: string) => void = console.log): Promise<number> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      await apply();
      return attempt + 1;
    } catch (error) {
      const delay = retryDelayMs(attempt);
      if (!isTransient(error) || Date.now() - started + delay > windowMs) throw error;
      log(`database not reachable yet (${(error as Error).message}); retrying in ${delay} ms`);
      await sleep(delay);
    }
  }
}

/**
 * The migration function: applies the service's pending migrations to the
 * linked database. infra/migrations.ts invokes it on every deploy; applying is
 * idempotent and advisory-locked, and a failure fails the deploy.
 */
export const handler = async (): Promise<{ migrated: true; attempts: number }> => {
  const dir = join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), migrationsBundleDir);
  const attempts = await migrateWhenReachable(() => migrate(databaseSettings().DATABASE_URL, dir), migrationConnectWindowMs);
  return { migrated: true, attempts };
};
