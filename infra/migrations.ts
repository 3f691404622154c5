import { lambda, sizing, type FunctionContext } from './functions';
import { migrationsBundleDir } from './handlers/bundle-layout';

/** The SQL migrations, as a path from the repository root (SST resolves copyFiles from there). */
export const migrationsSource = 'packages/core/src/migrations';

/**
 * Migrations run on deploy: a function bundled with the SQL files, invoked by
 * the deploy itself. The trigger changes on every deploy, so the database is
 * brought up to date even when only the DatabaseUrl secret changed.
 */
export function createMigrations(context: FunctionContext): { migrator: sst.aws.Function; invocation: aws.lambda.Invocation } {
  const migrator = new sst.aws.Function(
    'Migrator',
    lambda('infra/handlers/migrate.handler', context, sizing.migrator, {
      description: 'Applies the service’s database migrations on deploy',
      copyFiles: [{ from: migrationsSource, to: migrationsBundleDir }],
    }),
  );
  const invocation = new aws.lambda.Invocation('MigrateOnDeploy', {
    functionName: migrator.name,
    input: JSON.stringify({}),
    triggers: { deployedAt: new Date().toISOString() },
  });
  return { migrator, invocation };
}
