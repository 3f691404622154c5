import { linkedResources } from '@hatchery/platform/config';
import type { DeploySettings } from './settings';

/** What the functions and the listener link: the database URL, a secret or derived from the created database. */
export type DatabaseUrl = sst.Secret | sst.Linkable<{ value: $util.Output<string> }>;

export interface Database {
  url: DatabaseUrl;
  /** The created database, for what must wait until it (and its proxy's target) exists; none for an existing database. */
  instance?: sst.aws.Postgres;
  /** Its RDS Proxy's name, which the proxy's CloudWatch metrics are keyed by. */
  proxyName?: string;
}

/**
 * Either the database the indexer already writes (the DatabaseUrl secret), or
 * a new RDS PostgreSQL with RDS Proxy in front, so Lambda's many short-lived
 * connections share a few real ones. Both arrive as the same linked URL, so
 * the code reads one variable either way.
 *
 * SST's Postgres skips the final snapshot; a stage whose database goes away
 * (removed, or switched to an existing database) keeps one, named once per
 * instance so a later stage of the same name cannot collide with it.
 */
export function createDatabase(vpc: sst.aws.Vpc, settings: DeploySettings): Database {
  const name = linkedResources.DATABASE_URL.name;
  if (settings.existingDatabase) return { url: new sst.Secret(name) };
  const snapshotSuffix = new random.RandomId('DatabaseFinalSnapshotSuffix', { byteLength: 4 });
  // Named here (SST would generate one) so the alarms can name its metrics; RDS allows 60 characters.
  const proxyName = `${$app.name}-${$app.stage}-proxy`.slice(0, 60);
  const instance = new sst.aws.Postgres('Database', {
    vpc,
    proxy: true,
    transform: {
      instance: (args) => {
        args.skipFinalSnapshot = false;
        args.finalSnapshotIdentifier = $interpolate`${$app.name}-${$app.stage}-final-${snapshotSuffix.hex}`;
      },
      proxy: (args) => {
        args.name = proxyName;
      },
    },
  });
  const user = instance.username.apply(encodeURIComponent);
  const password = instance.password.apply(encodeURIComponent);
  // RDS Proxy presents an ACM certificate, which Node's default CAs verify.
  const value = $interpolate`postgres://${user}:${password}@${instance.host}:${instance.port}/${instance.database}?sslmode=verify-full`;
  return { url: new sst.Linkable(name, { properties: { value } }), instance, proxyName };
}
