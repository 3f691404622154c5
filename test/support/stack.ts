import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { DemoSize } from '@hatchery/local/demo-data';
import type { LocalFunction } from '@hatchery/local/gateway/lambda-api';
import { startStack, type RunningStack, type StackOptions } from '@hatchery/local/stack';

export interface TestStack extends RunningStack {
  /** Its data folder: `npm run token` and `npm run simulate` find the stack through it (HATCHERY_DATA_DIR). */
  dataDir: string;
  /** Runs SQL directly against the stack's database (fixtures, assertions). */
  sql<Row extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
  get(path: string, init?: RequestInit): Promise<Response>;
}

/** The real local stack on a free port with its own embedded PostgreSQL, as `npm start` boots it. */
export async function startTestStack(
  options: { demoData?: DemoSize | false; env?: Record<string, string>; functions?: Record<string, LocalFunction> } & Pick<
    StackOptions,
    'managementEndpoint' | 'listener' | 'quota'
  > = {},
): Promise<TestStack> {
  Object.assign(process.env, { LOG_LEVEL: 'silent', IP_RATE_LIMIT_PER_SECOND: '0', ...options.env });
  const dataDir = await mkdtemp(join(tmpdir(), 'hatchery-test-'));
  const stack = await startStack({
    port: 0,
    dataDir,
    // Kept on stop so a test can stop and restart the cluster; the folder is removed below.
    persistent: true,
    demoData: options.demoData ?? false,
    postgresTemplateDir: inject('postgresTemplateDir'),
    functions: options.functions,
    managementEndpoint: options.managementEndpoint,
    listener: options.listener,
    quota: options.quota,
  });
  const client = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  client.on('error', () => undefined);
  return {
    ...stack,
    dataDir,
    sql: async (text, values) => (await client.query(text, values)).rows,
    get: (path, init) => fetch(`${stack.url}${path}`, init),
    stop: async () => {
      await client.end().catch(() => undefined);
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
