import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackMs, watchLag } from '../../support/pace';

/**
 * A PostgreSQL that lets a client in and then never answers a statement, as a
 * server frozen mid-flight does (test/stack/database/frozen-database.test.ts
 * freezes a real one): it completes the startup exchange (AuthenticationOk,
 * ReadyForQuery) on loopback and reads whatever comes next in silence. Every
 * read the service makes through the pool must give up within the
 * database's bounds, so that a request answers 503 instead of waiting with it.
 */
let server: Server;
const sockets = new Set<Socket>();
let statements = 0;

const authenticationOk = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let started = false;
    socket.on('data', (data) => {
      if (started) {
        statements++;
        return;
      }
      // The startup message (no SSL request: DATABASE_SSL is off), answered as a server that trusts the client.
      started = true;
      socket.write(Buffer.concat([authenticationOk, readyForQuery]));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.env.DATABASE_URL = `postgres://hatchery@127.0.0.1:${(server.address() as AddressInfo).port}/hatchery`;
});

afterAll(async () => {
  const { closeDb } = await import('@hatchery/core/db');
  for (const socket of sockets) socket.destroy();
  await closeDb();
  await new Promise((resolve) => server.close(resolve));
});

/** How long `work` took to fail, with what, and the bound it had: unavailableWithinMs, and what this process's lag took meanwhile (support/pace.ts). */
async function failure(work: () => Promise<unknown>): Promise<{ error: Error; ms: number; boundMs: number }> {
  const { databaseLimits } = await import('@hatchery/core/db');
  const lag = watchLag();
  const started = performance.now();
  const error = await work().then(
    () => new Error('it answered'),
    (thrown: Error) => thrown,
  );
  return { error, ms: performance.now() - started, boundMs: databaseLimits.unavailableWithinMs + slackMs({ lagMs: lag.stop() }) };
}

describe('a database that takes connections and never answers', () => {
  it('fails a statement on the pool at the query timeout, unavailable', async () => {
    const { databaseLimits, pooled } = await import('@hatchery/core/db');
    const { isDatabaseUnavailable } = await import('@hatchery/core/errors');
    const before = statements;
    const { error, ms, boundMs } = await failure(() => pooled.query('SELECT 1'));
    expect(statements).toBeGreaterThan(before);
    expect(isDatabaseUnavailable(error), error.message).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(databaseLimits.queryTimeoutMs - 50);
    expect(ms).toBeLessThan(boundMs);
  });

  it('fails the read of the index’s position, which indexed reads, /health and the summary wait on, unavailable', async () => {
    const { isDatabaseUnavailable } = await import('@hatchery/core/errors');
    const { readPooledFreshness } = await import('@hatchery/core/indexer/freshness-read');
    const { error, ms, boundMs } = await failure(readPooledFreshness);
    expect(isDatabaseUnavailable(error), error.message).toBe(true);
    expect(ms).toBeLessThan(boundMs);
  });

  it('answers /health unavailable at its own timeout, and the pool’s client is given back at the query timeout', async () => {
    const { checkHealth, healthTimeoutMs } = await import('@hatchery/core/health-check');
    const { databaseLimits, db } = await import('@hatchery/core/db');
    const { error, ms } = await failure(() => checkHealth());
    expect(error).toMatchObject({ kind: 'unavailable' });
    expect(ms).toBeGreaterThanOrEqual(healthTimeoutMs - 50);
    // The ping it gave up on still ends, and its client with it, rather than holding a connection for ever.
    await expect.poll(() => db().totalCount, { timeout: databaseLimits.unavailableWithinMs }).toBe(0);
  });
});
