import type { Database } from './database';
import { lambda, sizing, type FunctionContext } from './functions';
import { migrationsBundleDir } from './handlers/bundle-layout';

/** The SQL migrations, as a path from the repository root (SST resolves copyFiles from there). */
const migrationsSource = 'packages/core/src/migrations';

/**
 * Migrations run on deploy: a function bundled with the SQL files, invoked by
 * the deploy itself. The trigger changes on every deploy, so the database is
 * brought up to date even when only the DatabaseUrl secret changed. On a
 * first deploy the invocation waits for the whole database component (the
 * instance, the proxy and its registered target); the migrator still retries
 * its connection, as RDS Proxy accepts connections a while before its target
 * is available.
 */
export function createMigrations(context: FunctionContext, database: Database): { migrator: sst.aws.Function; invocation: aws.lambda.Invocation } {
  const migrator = new sst.aws.Function(
    'Migrator',
    lambda('infra/handlers/migrate.handler', context, sizing.migrator, 'Applies the service’s database migrations on deploy', {
      copyFiles: [{ from: migrationsSource, to: migrationsBundleDir }],
    }),
  );
  const invocation = new aws.lambda.Invocation(
    'MigrateOnDeploy',
    { functionName: migrator.name, input: JSON.stringify({}), triggers: { deployedAt: new Date().toISOString() } },
    { dependsOn: database.instance ? [migrator, database.instance] : [migrator] },
  );
  return { migrator, invocation };
}
