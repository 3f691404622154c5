import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import * as esbuild from 'esbuild';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { Listener, type ListenerOptions } from '@hatchery/listener/listener';
import { buildOptions } from '../../../packages/listener/build.mjs';
import { slackMs, slowestOf, watchLag } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import type { MarketChanged } from '@hatchery/core/realtime/events';
import { anyVersion, connectHub, indexer, listingsOf, record, sleep, waitFor, versionsGrow, wallet, type Hub } from './support';

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
const hubs: Hub[] = [];
const listeners: Listener[] = [];
const store = connectionStore();

/** A listener with test timings, and a log that keeps every line it writes. */
function startListener(options: Partial<ListenerOptions> = {}) {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const listener = new Listener({
    databaseUrl: stack.databaseUrl,
    managementEndpoint: stack.url,
    pollMs: 200,
    reconnectMs: 300,
    log: pino({ level: 'info' }, sink),
    ...options,
  }).start();
  listeners.push(listener);
  return Object.assign(listener, { lines, problems: () => lines.filter((line) => line.level >= 40) });
}

const stopAll = async () => {
  await Promise.all(listeners.splice(0).map((listener) => listener.stop()));
};

const subscribed = async (address: string) => {
  const hub = await connectHub(stack.url);
  hubs.push(hub);
  await hub.invoke('Subscribe', address);
  return { hub, forge: record<{ requestId: string }>(hub, 'forgeFulfilled'), market: record<MarketChanged>(hub, 'marketChanged') };
};

/** The sales the stored summary counts (none before a first sum), and those the indexer holds. */
const storedSales = async () => (await writes.pool.query<{ sales: number }>('SELECT sales_count::int AS sales FROM hatchery.summary')).rows[0]?.sales;
const indexedSales = async () => (await writes.pool.query<{ sales: number }>('SELECT count(*)::int AS sales FROM indexer.sales')).rows[0]!.sales;
const summaryCurrent = async () => (await storedSales()) === (await indexedSales());
let sales = 0;
/** A sale committed as Ponder commits a block: with a NOTIFY naming its table, or (a reorg's revert, a backfill) naming none. */
async function commitSale(notify: 'notified' | 'silent') {
  const client = await writes.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO indexer.sales (id, token_id, seller, buyer, price, platform_fee, royalty, block_number) VALUES ($1, 1, $2, $2, 5, 0, 0, $3)`,
      [`listener-sale-${++sales}`, wallet(8), writes.nextBlock()],
    );
    if (notify === 'notified') await client.query(`SELECT pg_notify('indexer_live_query', '["sales"]')`);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/** Leading, with its first read's resync broadcast out, so clients connected next do not receive it. */
const leading = async (listener: Listener) => {
  await waitFor(() => listener.stats().leader && listener.stats().reads > 0, 'the listener to lead');
  await listener.idle();
  await stack.lambda.settled();
};

beforeAll(async () => {
  stack = await startTestStack();
  // These tests run their own listeners, with short timings; the stack's would compete for the lock.
  await stack.listener?.stop();
  writes = indexer(stack);
  await createIndexerSchema(writes.pool);
});
afterEach(stopAll);
afterAll(async () => {
  await Promise.all(hubs.map((hub) => hub.stop()));
  await stopAll();
  await writes?.end();
  await stack?.stop();
});

describe('the listener', () => {
  it('delivers both fulfilments of one block committed by the indexer in two transactions', async () => {
    const listener = startListener();
    await leading(listener);
    const client = await subscribed(wallet(1));
    const block = writes.nextBlock();
    const first = await writes.fulfilFor(wallet(1), block);
    await waitFor(() => client.forge.length === 1, 'the first fulfilment');
    // The listener has now seen this block; the second fulfilment lands in it after that read.
    const second = await writes.fulfilFor(wallet(1), block);
    await waitFor(() => client.forge.length === 2, 'the second fulfilment of the same block');
    expect(client.forge).toEqual([first, second]);
    expect(listener.problems()).toEqual([]);
  });

  it('reconnects after the database restarts under it and loses no fulfilment', async () => {
    // Long enough for the restart and a commit to come first, however slow the machine makes them.
    const reconnectMs = 10_000;
    const listener = startListener({ reconnectMs });
    await leading(listener);
    const client = await subscribed(wallet(2));
    const before = await writes.fulfilFor(wallet(2));
    await waitFor(() => client.forge.length === 1, 'the fulfilment before the restart');

    await stack.postgres!.stop();
    await waitFor(() => !listener.stats().leader, 'the listener to notice');
    await stack.postgres!.start();
    // Committed while the listener is still waiting to reconnect: its NOTIFY reaches nobody, only the cursor finds it.
    const during = await writes.fulfilFor(wallet(2));
    expect(listener.stats().leader).toBe(false);

    await waitFor(() => client.forge.length === 2, 'the fulfilment committed during the outage', 3 * reconnectMs);
    const after = await writes.fulfilFor(wallet(2));
    await waitFor(() => client.forge.length === 3, 'a fulfilment after the reconnection');
    expect(client.forge).toEqual([before, during, after]);
    expect(listener.stats().sessions).toBe(2);
  }, 60_000);

  it('fans out only from the lock holder when two run, and the standby takes over without loss or repeat', async () => {
    const first = startListener();
    await leading(first);
    const second = startListener();
    await waitFor(() => second.stats().sessions === 1, 'the second listener to connect');
    expect(second.stats().leader).toBe(false);

    const client = await subscribed(wallet(3));
    const expected = [];
    for (let i = 0; i < 5; i++) {
      expected.push(await writes.fulfilFor(wallet(3)));
      await writes.listToken();
    }
    await waitFor(() => client.forge.length === 5, 'five fulfilments');
    // forgeFulfilled does not wait for the broadcasts: the last snapshot's marketChanged may still be on its way.
    await first.idle();
    const snapshot = JSON.stringify(await writes.snapshot());
    await waitFor(() => client.market.length > 0 && JSON.stringify(listingsOf(client.market.at(-1)!)) === snapshot, 'the last snapshot’s marketChanged');
    // Both have had every chance to fan out: the leader has nothing in flight or waiting, and the standby, which has
    // polled for the lock all along, has read nothing, so no second fan-out comes.
    await first.idle();
    expect(client.forge).toEqual(expected);
    expect(new Set(client.market.map((event) => JSON.stringify(listingsOf(event)))).size).toBe(client.market.length);
    expect(versionsGrow(client.market)).toBe(true);
    expect(second.stats()).toMatchObject({ leader: false, reads: 0 });

    await first.stop();
    await waitFor(() => second.stats().leader, 'the standby to take over');
    const later = await writes.fulfilFor(wallet(3));
    await waitFor(() => client.forge.length === 6, 'a fulfilment after the failover');
    // With nothing left in flight, the new leader has sent what it will: the earlier fulfilments not again.
    await second.idle();
    expect(client.forge).toEqual([...expected, later]);
  });

  it('folds a burst of 10,000 notifications into a few reads', async () => {
    const listener = startListener({ pollMs: 60_000 });
    await leading(listener);
    const client = await subscribed(wallet(4));
    const readsBefore = listener.stats().reads;
    const notificationsBefore = listener.stats().notifications;
    const fulfilment = await writes.fulfilFor(wallet(4));
    await writes.pool.query(`SELECT pg_notify('indexer_live_query', i::text) FROM generate_series(1, 10000) AS i`);
    await waitFor(() => listener.stats().notifications - notificationsBefore === 10_001, 'all notifications');
    await waitFor(() => client.forge.length === 1, 'the fulfilment');
    await listener.idle();
    const reads = listener.stats().reads - readsBefore;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(5);
    expect(client.forge).toEqual([fulfilment]);
  });

  it('stays silent without the listings table, then reports once it appears', async () => {
    const listener = startListener();
    await leading(listener);
    const client = await subscribed(wallet(5));
    await writes.pool.query('DROP TABLE indexer.listings');
    const readsBefore = listener.stats().reads;
    await writes.notify();
    await waitFor(() => listener.stats().reads >= readsBefore + 3, 'reads without the table');
    expect(client.market).toEqual([]);
    expect(listener.stats().failedReads).toBe(0);
    expect(listener.problems()).toEqual([]);
    // The other table is still read meanwhile.
    const fulfilment = await writes.fulfilFor(wallet(5));
    await waitFor(() => client.forge.length === 1, 'a fulfilment while listings are missing');
    expect(client.forge).toEqual([fulfilment]);

    await createIndexerSchema(writes.pool);
    await writes.listToken();
    await waitFor(() => client.market.length === 1, 'marketChanged once the table exists');
    expect(client.market).toEqual([{ count: 1, maxBlock: (await writes.snapshot()).maxBlock, ...anyVersion }]);
  });

  it('keeps the summary’s row: sums as it leads, once per change interval however many blocks name a summed table, and a change none names within its longest interval', async () => {
    const summary = { changedMs: 400, maxIntervalMs: 3_000 };
    const listener = startListener({ summary });
    await leading(listener);
    await waitFor(summaryCurrent, 'the sum as it takes the lead');
    const before = listener.stats().summaries;
    const startedAt = performance.now();
    for (let i = 0; i < 10; i++) await commitSale('notified');
    await waitFor(summaryCurrent, 'the notified sales in the row');
    // One more change interval, for a sum a notification still had to bring.
    await sleep(summary.changedMs);
    // At most one sum an interval over the time the ten took, however long the machine made it.
    expect(listener.stats().summaries - before).toBeLessThanOrEqual(Math.ceil((performance.now() - startedAt) / summary.changedMs) + 1);

    // Nothing names it, as nothing names Ponder's revert of a reorganised block: the longest interval catches it.
    const roundTripMs = await slowestOf(summaryCurrent);
    const lag = watchLag();
    const committedAt = performance.now();
    await commitSale('silent');
    await waitFor(summaryCurrent, 'a change no notification named', 5 * summary.maxIntervalMs);
    expect(performance.now() - committedAt).toBeLessThan(summary.maxIntervalMs + slackMs({ lagMs: lag.stop(), roundTripMs }));
    expect(listener.stats().failedSummaries).toBe(0);
    expect(listener.problems()).toEqual([]);
  });

  it('sums on a session of its own: a fulfilment goes out while a sum waits on a lock, and a failed sum is logged and tried again, the term going on', async () => {
    const listener = startListener({ summary: { changedMs: 200, maxIntervalMs: 60_000 } });
    await leading(listener);
    await waitFor(() => listener.stats().summaries > 0, 'the first sum');
    const client = await subscribed(wallet(8));
    const locker = await writes.pool.connect();
    const summaries = listener.stats().summaries;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE indexer.sales IN ACCESS EXCLUSIVE MODE');
      await writes.pool.query(`SELECT pg_notify('indexer_live_query', '["sales"]')`);
      const waiting = `SELECT 1 FROM pg_stat_activity WHERE application_name = 'hatchery-listener-summary' AND wait_event_type = 'Lock'`;
      await waitFor(async () => (await writes.pool.query(waiting)).rowCount === 1, 'a sum waiting on the lock');
      const fulfilment = await writes.fulfilFor(wallet(8));
      await waitFor(() => client.forge.length === 1, 'the fulfilment while the sum waits');
      expect(client.forge).toEqual([fulfilment]);
      expect(listener.stats().summaries).toBe(summaries);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    await waitFor(() => listener.stats().summaries > summaries, 'the sum once the lock is gone');

    await writes.pool.query('ALTER TABLE hatchery.summary ADD CONSTRAINT refuse_every_sum CHECK (sales_count < 0) NOT VALID');
    try {
      await commitSale('notified');
      await waitFor(() => listener.stats().failedSummaries >= 2, 'a failed sum, tried again');
      expect(listener.problems().map((line) => line.msg)).toContain('the transparency summary could not be summed; trying again');
      expect(listener.stats()).toMatchObject({ leader: true, sessions: 1 });
      const fulfilment = await writes.fulfilFor(wallet(8));
      await waitFor(() => client.forge.length === 2, 'a fulfilment while sums fail');
      expect(client.forge.at(-1)).toEqual(fulfilment);
    } finally {
      await writes.pool.query('ALTER TABLE hatchery.summary DROP CONSTRAINT refuse_every_sum');
    }
    await waitFor(summaryCurrent, 'a sum stored once it can be again');
  });

  it('removes a connection that the management API reports gone', async () => {
    const listener = startListener();
    await leading(listener);
    // A connection API Gateway has forgotten but DynamoDB still lists (a $disconnect that never came).
    await store.add('GhostConnectn0=', Date.now());
    await store.subscribe('GhostConnectn0=', wallet(6));
    const live = await subscribed(wallet(6));
    const goneBefore = listener.stats().gone;

    const fulfilment = await writes.fulfilFor(wallet(6));
    await waitFor(() => live.forge.length === 1, 'the live connection’s event');
    await waitFor(() => listener.stats().gone > goneBefore, 'the gone connection to be noticed');
    expect(live.forge).toEqual([fulfilment]);
    expect(await all(store.all())).not.toContain('GhostConnectn0=');
    expect(await all(store.group(wallet(6)))).not.toContain('GhostConnectn0=');
    expect(await all(store.group(wallet(6)))).toHaveLength(1);
  });
});

describe('the container entry point', () => {
  it('runs bundled as the Dockerfile builds it, delivers events, and stops on SIGTERM releasing the lock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hatchery-listener-'));
    try {
      await esbuild.build(buildOptions(join(dir, 'listener.mjs')));
      const child = spawn(process.execPath, [join(dir, 'listener.mjs')], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: stack.databaseUrl,
          WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url,
          DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const logged: string[] = [];
      child.stdout.on('data', (chunk: Buffer) => logged.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
      const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
      try {
        await waitFor(() => logged.some((line) => line.includes('"listener is leading"')), 'the bundled listener to lead', 15_000);
        const client = await subscribed(wallet(7));
        const fulfilment = await writes.fulfilFor(wallet(7));
        await waitFor(() => client.forge.length === 1, 'an event from the bundled listener');
        expect(client.forge).toEqual([fulfilment]);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).toEqual([0, null]);
      expect(logged.some((line) => line.includes('"listener stopping"'))).toBe(true);
      // The lock went with its session: another listener leads at once.
      const next = startListener();
      await leading(next);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

async function all(pages: AsyncIterable<string[]>): Promise<string[]> {
  const ids: string[] = [];
  for await (const page of pages) ids.push(...page);
  return ids;
}
