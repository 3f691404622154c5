import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { processCpuMs } from './database-cpu';
import { startServer } from './throughput';

const pageSize = 2;
const route = {
  path: '/page',
  page: { text: 'SELECT n AS "value" FROM generate_series(1, $1::int) AS n', values: [pageSize] },
  count: { text: 'SELECT 2 AS total_count', values: [] },
  pageSize,
  keyColumns: [],
};

let dataDir: string;
let postgres: EmbeddedDatabase;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-minimal-server-'));
  postgres = await startEmbeddedPostgres({ dataDir, persistent: false, templateDir: inject('postgresTemplateDir') });
});

afterAll(async () => {
  await postgres?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The throughput section's minimal server in a process of its own, and the CPU it spends on `requests` answers, one after another. */
async function cpuOfAnswers(holdMicros: number, requests: number) {
  const setup = { databaseUrl: postgres.url, concurrency: 1, countTtlMs: 1000, routes: [route], holdMicros };
  const server = startServer<{ port: number }>('the minimal server', './minimal-server.mjs', setup);
  try {
    const url = `http://127.0.0.1:${(await server.ready).port}${route.path}`;
    const body = await (await fetch(url)).json();
    const before = processCpuMs(server.pid!)!;
    for (let index = 0; index < requests; index++) await (await fetch(url)).text();
    return { body, cpuMs: processCpuMs(server.pid!)! - before };
  } finally {
    await server.stop();
  }
}

describe('the throughput section’s minimal server', () => {
  it('answers the page’s rows, and with holdMicros holds its thread that much longer on each answer', async () => {
    const requests = 50;
    const plain = await cpuOfAnswers(0, requests);
    const calibrated = await cpuOfAnswers(4000, requests);
    expect(plain.body).toEqual({ items: [{ value: 1 }, { value: 2 }], totalCount: 2, page: 1, pageSize });
    expect(calibrated.body).toEqual(plain.body);
    // Held 4 ms an answer, 200 ms over the 50: CPU spent unless the scheduler took the core away, read from /proc to the clock tick (10 ms).
    expect(calibrated.cpuMs - plain.cpuMs).toBeGreaterThanOrEqual(0.5 * requests * 4);
    expect(calibrated.cpuMs - plain.cpuMs).toBeLessThan(1.5 * requests * 4);
  });
});
