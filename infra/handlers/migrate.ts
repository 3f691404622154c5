import { join } from 'node:path';
import { config } from '@hatchery/core/config';
import { migrate } from '@hatchery/core/migrate';
import { migrationsBundleDir } from './bundle-layout';

/**
 * The migration function: applies the service's pending migrations to the
 * linked database. infra/migrations.ts invokes it on every deploy; applying is
 * idempotent and advisory-locked, and a failure fails the deploy.
 */
export const handler = async (): Promise<{ migrated: true }> => {
  await migrate(config().DATABASE_URL, join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), migrationsBundleDir));
  return { migrated: true };
};
