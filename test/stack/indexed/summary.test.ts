import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { indexerTable } from '@hatchery/core/indexer/names';
import { summaryLimits, storeSummary } from '@hatchery/core/indexer/summary-store';
import { Listener } from '@hatchery/listener/listener';
import { slackMs, slowestOf, watchLag } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, createSchema, getJson, insertRows, wallet } from './support';

let stack: TestStack;
/** Every statement any pg client in this process sends: the handlers run in-process behind the local gateway, as does a listener. */
const statements = vi.spyOn(pg.Client.prototype, 'query');
const sent = () =>
  statements.mock.calls.flatMap(([statement], index) => {
    const client = statements.mock.contexts[index] as unknown as { connectionParameters: { application_name?: string } };
    // Text and values, or a config (core's statements): either way, its text.
    const text = typeof statement === 'string' ? statement : (statement as { text?: unknown } | undefined)?.text;
    return typeof text === 'string' ? [{ text, byListener: client.connectionParameters.application_name?.startsWith('hatchery-listener') ?? false }] : [];
  });
/** Summing rounds (the only statements that read token_transfers) a function sent, or the listener. */
const sums = (by: 'function' | 'listener') =>
  sent().filter(({ text, byListener }) => text.includes(indexerTable('token_transfers')) && byListener === (by === 'listener')).length;
/** A function's reads of the stored row (the only statement that asks its age). */
const rowReads = () => sent().filter(({ text, byListener }) => !byListener && text.includes('"ageMs"')).length;

/** Moves the process clock past the cache lifetime (Date only, then frozen; timers and sockets keep real time), as a cold instance has no cache. */
const pastCacheLifetime = () => {
  vi.setSystemTime(Date.now() + summaryLimits.cacheMs + 1_000);
};

type StoredRow = { salesCount: number; totalVolume: string; ageMs: number; asOf: Date };
const stored = async () =>
  (
    await stack.sql<StoredRow>(
      `SELECT sales_count::int AS "salesCount", total_volume::text AS "totalVolume", (extract(epoch FROM now() - as_of) * 1000)::float8 AS "ageMs", as_of AS "asOf" FROM hatchery.summary`,
    )
  )[0];
/** The row as old as it would be once the cache lifetime had passed on the database's clock too. */
const rowPastCacheLifetime = () => stack.sql(`UPDATE hatchery.summary SET as_of = as_of - make_interval(secs => $1)`, [(summaryLimits.cacheMs + 1_000) / 1000]);

const listeners: Listener[] = [];
/** Only a notification, or taking the lead, makes the listener sum within these tests. */
const listenerSums = { changedMs: 300, maxIntervalMs: 60_000 };
/** A leading listener, as in AWS, with short timings. */
const startListener = () => {
  const listener = new Listener({
    databaseUrl: stack.databaseUrl,
    managementEndpoint: stack.url,
    pollMs: 200,
    reconnectMs: 300,
    summary: listenerSums,
    log: pino({ level: 'silent' }),
  }).start();
  listeners.push(listener);
  return listener;
};

beforeAll(async () => {
  stack = await startTestStack();
  // The tests that want a listener start their own, with short timings; without one, the functions keep the row themselves.
  await stack.listener?.stop();
});
afterAll(async () => {
  vi.useRealTimers();
  await Promise.all(listeners.map((listener) => listener.stop()));
  await stack?.stop();
});
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((listener) => listener.stop()));
  statements.mockClear();
});

const summary = () => getJson(stack, '/transparency/summary');

const alice = wallet('ab');
const bob = wallet('cd');
const sale = (id: string, price: string) => ({ id, token_id: '1', seller: alice, buyer: bob, price, platform_fee: '0', royalty: '0', block_number: '1' });
/** A sale as Ponder writes one: its NOTIFY names the table. */
const saleNotified = async (id: string, price: string) => {
  await insertRows(stack, 'sales', [sale(id, price)]);
  await stack.sql(`SELECT pg_notify('indexer_live_query', '["sales"]')`);
};
const expected = {
  salesCount: 3,
  totalVolume: (2n * 2n ** 64n + 503n).toString(),
  nftCount: 3,
  editionCount: 2,
  totalTokenTransferred: (2n ** 64n + 15n).toString(),
};
const withSales = (...prices: bigint[]) => ({
  ...expected,
  salesCount: expected.salesCount + prices.length,
  totalVolume: prices.reduce((total, price) => total + price, BigInt(expected.totalVolume)).toString(),
});

describe('GET /transparency/summary', () => {
  it('answers zeros before the indexer has created its tables, and stores nothing', async () => {
    const { status, body } = await summary();
    expect(status).toBe(200);
    expect(body).toStrictEqual({ salesCount: 0, totalVolume: '0', nftCount: 0, editionCount: 0, totalTokenTransferred: '0' });
    expect(await stored()).toBeUndefined();
  });

  it('sums in the database, exactly beyond 64 bits, with no row yet: 50 concurrent calls on a cold instance make one round, stored for the others', async () => {
    await createSchema(stack);
    await insertRows(stack, 'sales', [sale('s1', above64(1)), sale('s2', above64(2)), sale('s3', '500')]);
    await insertRows(
      stack,
      'editions',
      ['1', '2'].map((id) => ({
        edition_id: id,
        name: `e${id}`,
        art_uri: '',
        health: 0,
        skill: 0,
        morale: 0,
        rarity: 0,
        max_supply: '1',
        minted: '0',
        mint_start: '0',
        mint_end: '0',
        price: '0',
        distribution: 0,
        active: true,
      })),
    );
    await insertRows(
      stack,
      'nfts',
      ['1', '2', '3', '4'].map((id) => ({
        token_id: id,
        owner: alice,
        edition_id: '1',
        gender: 0,
        nft_name: `n${id}`,
        staked: id === '2',
        burned: id === '4',
      })),
    );
    await insertRows(stack, 'token_transfers', [
      { id: 't1', from_addr: alice, to_addr: bob, value: above64(10), block_number: '1' },
      { id: 't2', from_addr: bob, to_addr: alice, value: '5', block_number: '2' },
    ]);
    pastCacheLifetime();
    statements.mockClear();

    const responses = await Promise.all(Array.from({ length: 50 }, () => summary()));
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    for (const { body } of responses) expect(body).toStrictEqual(expected);
    expect(rowReads()).toBe(1);
    expect(sums('function')).toBe(1);
    const row = await stored();
    expect(row).toMatchObject({ salesCount: expected.salesCount, totalVolume: expected.totalVolume });
    // Summed by this request: younger than the cache lifetime, which a row it had not replaced would be past.
    expect(row!.ageMs).toBeLessThan(summaryLimits.cacheMs);
  });

  it('serves a second call within the cache lifetime without a query', async () => {
    await insertRows(stack, 'sales', [sale('s4', '7')]);
    statements.mockClear();
    const cached = await summary();
    expect(cached.body).toStrictEqual(expected);
    expect(rowReads() + sums('function')).toBe(0);
  });

  it('answers a cold instance from a row younger than the cache lifetime, without summing', async () => {
    pastCacheLifetime();
    statements.mockClear();
    const { body } = await summary();
    // The row predates s4 by less than the cache lifetime: it is what any instance may still serve.
    expect(body).toStrictEqual(expected);
    expect(rowReads()).toBe(1);
    expect(sums('function')).toBe(0);
  });

  it('sums once the row is older than the cache lifetime (no listener keeps it), and stores what it summed', async () => {
    await rowPastCacheLifetime();
    pastCacheLifetime();
    statements.mockClear();
    const responses = await Promise.all(Array.from({ length: 20 }, () => summary()));
    for (const { body } of responses) expect(body).toStrictEqual(withSales(7n));
    expect(sums('function')).toBe(1);
    const row = await stored();
    expect(row).toMatchObject({ salesCount: 4 });
    expect(row!.ageMs).toBeLessThan(summaryLimits.cacheMs);
  });

  it('never replaces the row with totals summed earlier than it', async () => {
    const earlier = new pg.Client({ connectionString: stack.databaseUrl });
    await earlier.connect();
    try {
      // now() is this transaction's start, before the row stored next: what it stores later claims that earlier time.
      await earlier.query('BEGIN');
      await earlier.query('SELECT now()');
      await insertRows(stack, 'sales', [sale('s5', '11')]);
      await rowPastCacheLifetime();
      pastCacheLifetime();
      expect((await summary()).body).toStrictEqual(withSales(7n, 11n));
      const newer = await stored();
      expect(newer).toMatchObject({ salesCount: 5 });
      await insertRows(stack, 'sales', [sale('s6', '13')]);
      expect(await storeSummary(earlier)).toBe(true);
      await earlier.query('COMMIT');
      expect(await stored()).toMatchObject({ salesCount: 5, asOf: newer!.asOf });
    } finally {
      await earlier.end();
    }
  });

  it('is kept by the leading listener: a cold instance reads it, a sale is in it within the change interval, and answers are exact within the cache lifetime', async () => {
    const listener = startListener();
    /**
     * Until the row counts `sales` after `change`; its sum started within the change interval of the sum before (the
     * lead's first, or the last change's), on the database's clock, give or take the lag and round trips of this
     * machine now.
     */
    const storedWithinChangeInterval = async (change: () => Promise<unknown>, sales: number) => {
      const roundTripMs = await slowestOf(stored);
      const lag = watchLag();
      const [{ changedAt }] = (await stack.sql<{ changedAt: Date }>(`SELECT clock_timestamp() AS "changedAt"`)) as [{ changedAt: Date }];
      await change();
      await expect.poll(async () => (await stored())?.salesCount, { timeout: 20 * listenerSums.changedMs }).toBe(sales);
      const { asOf } = (await stored())!;
      expect(asOf.getTime() - changedAt.getTime()).toBeLessThan(listenerSums.changedMs + slackMs({ lagMs: lag.stop(), roundTripMs }));
    };
    await expect.poll(() => listener.stats().summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    // The listener's first sum, as it took the lead, has s6.
    expect(await stored()).toMatchObject({ salesCount: 6 });

    await storedWithinChangeInterval(() => saleNotified('s7', '17'), 7);
    pastCacheLifetime();
    statements.mockClear();
    expect((await summary()).body).toStrictEqual(withSales(7n, 11n, 13n, 17n));
    expect(rowReads()).toBe(1);
    expect(sums('function')).toBe(0);

    // Cached, the answer may lag a change by less than the cache lifetime; past it, it has the change.
    await storedWithinChangeInterval(async () => {
      await saleNotified('s8', '19');
      expect((await summary()).body).toStrictEqual(withSales(7n, 11n, 13n, 17n));
    }, 8);
    pastCacheLifetime();
    statements.mockClear();
    expect((await summary()).body).toStrictEqual(withSales(7n, 11n, 13n, 17n, 19n));
    expect(sums('function')).toBe(0);
    expect(listener.stats().failedSummaries).toBe(0);
  });

  it('answers 503 problem+json while the database is stopped (a list too), caches no failure, and recovers once it is back', async () => {
    await stack.postgres!.stop();
    try {
      pastCacheLifetime();
      for (let attempt = 0; attempt < 2; attempt++) {
        const { status, headers, body } = await summary();
        expect(status).toBe(503);
        expect(headers.get('content-type')).toBe('application/problem+json');
        expect(headers.get('retry-after')).toBeTruthy();
        expect(body).toStrictEqual({ title: 'Service unavailable', status: 503, detail: expect.any(String), instance: '/transparency/summary' });
        expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|SELECT|at /);
      }
      const list = await getJson(stack, '/transparency/sales');
      expect(list.status).toBe(503);
      expect(list.headers.get('content-type')).toBe('application/problem+json');
    } finally {
      await stack.postgres!.start();
    }
    await insertRows(stack, 'sales', [sale('s9', '1')]);
    await rowPastCacheLifetime();
    statements.mockClear();
    // The clock has not moved since the failures, so a cached failure would show here.
    const recovered = await summary();
    expect(recovered.status).toBe(200);
    expect(recovered.body.salesCount).toBe(9);
    expect(sums('function')).toBe(1);
  });
});
