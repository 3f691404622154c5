import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseLimits, db, query, queryValues, transaction, withRetry } from '@hatchery/core/db';
import { toProblem } from '@hatchery/core/errors';
import { slackMs, slowestOf, timed } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.sql('CREATE TABLE retry_probe (id int PRIMARY KEY)');
});
afterAll(() => stack?.stop());

const terminateServiceConnections = () =>
  stack.sql(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
  );

describe('database access', () => {
  it('survives its connections being terminated by the server (57P01)', async () => {
    await Promise.all(Array.from({ length: 4 }, () => query('SELECT pg_sleep(0.01)')));
    expect(db().idleCount).toBeGreaterThan(0);
    await terminateServiceConnections();
    const rows = await query<{ one: number }>('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
  });

  it("bounds each statement itself and hands it to pg with a callback, never through pg's query_timeout or promise form", async () => {
    // Either of pg's own makes V8 pretenure what the reads allocate (packages/core/src/db.ts): a timing test could not see
    // it reliably, so the forms are checked.
    expect((db().options as { query_timeout?: unknown }).query_timeout).toBeUndefined();
    const statements = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await query('SELECT 1 AS one');
      await queryValues('SELECT 1 AS one');
      await transaction((client) => client.query('SELECT 1 AS one'));
      const sent = statements.mock.calls;
      expect(sent.length).toBeGreaterThanOrEqual(5);
      for (const args of sent) expect(typeof args.at(-1)).toBe('function');
    } finally {
      statements.mockRestore();
    }
  });

  it('retries a transaction as a whole and commits it once', async () => {
    let attempts = 0;
    await transaction(async (client) => {
      attempts++;
      await client.query('INSERT INTO retry_probe VALUES (1)');
      if (attempts === 1) await terminateServiceConnections();
      await client.query('SELECT 1');
    });
    expect(attempts).toBe(2);
    expect(await stack.sql('SELECT id FROM retry_probe')).toEqual([{ id: 1 }]);
  });

  it('gives up after three retries and does not retry a bad query', async () => {
    let calls = 0;
    const unavailable = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await expect(
      withRetry(async () => {
        calls++;
        throw unavailable;
      }),
    ).rejects.toBe(unavailable);
    expect(calls).toBe(1 + databaseLimits.transientRetries);

    calls = 0;
    await expect(
      withRetry(async () => {
        calls++;
        return query('SELECT * FROM no_such_table');
      }),
    ).rejects.toMatchObject({ code: '42P01' });
    expect(calls).toBe(1);
  });

  it('lets PostgreSQL cancel a statement at the statement timeout, which is a 503, not a 500, and not retried', async () => {
    const roundTripMs = await slowestOf(() => query('SELECT 1'));
    const { value: error, ms, lagMs } = await timed(() => query('SELECT pg_sleep(10)').catch((caught: unknown) => caught));
    expect(error).toMatchObject({ code: '57014' });
    expect(ms).toBeGreaterThanOrEqual(databaseLimits.statementTimeoutMs - 50);
    // Within the client's own bound on a statement, give or take the lag and round trips of this machine now.
    expect(ms).toBeLessThan(databaseLimits.queryTimeoutMs + slackMs({ lagMs, roundTripMs }));
    expect(toProblem(error, '/x').status).toBe(503);
  });
});
