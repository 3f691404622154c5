import { linkedResources } from '@hatchery/core/config';
import type { DeploySettings } from './settings';

/** What the functions and the listener link: the database URL, a secret or derived from the created database. */
export type DatabaseUrl = sst.Secret | sst.Linkable<{ value: $util.Output<string> }>;

/**
 * Either the database the indexer already writes (the DatabaseUrl secret), or
 * a new RDS PostgreSQL with RDS Proxy in front, so Lambda's many short-lived
 * connections share a few real ones. Both arrive as the same linked URL, so
 * the code reads one variable either way.
 */
export function createDatabase(vpc: sst.aws.Vpc, settings: DeploySettings): DatabaseUrl {
  const name = linkedResources.DATABASE_URL.name;
  if (settings.existingDatabase) return new sst.Secret(name);
  const database = new sst.aws.Postgres('Database', { vpc, proxy: true });
  const user = database.username.apply(encodeURIComponent);
  const password = database.password.apply(encodeURIComponent);
  // RDS Proxy presents an ACM certificate, which Node's default CAs verify.
  const value = $interpolate`postgres://${user}:${password}@${database.host}:${database.port}/${database.database}?sslmode=verify-full`;
  return new sst.Linkable(name, { properties: { value } });
}
