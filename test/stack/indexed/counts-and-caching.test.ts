import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeListings, listingsSource } from '@hatchery/core/indexer/listings';
import { nftsSource, ownedNfts } from '@hatchery/core/indexer/nfts';
import { salesSource } from '@hatchery/core/indexer/sales';
import { countCacheLimits, createCountCache } from '@hatchery/core/query/count-cache';
import { pageQueryLimits, buildPageStatements, pageQuerySchema } from '@hatchery/core/query/page-query';
import { demoAddress, demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../../support/stack';
import { publicCache } from '@hatchery/functions/middleware/http-caching';

const request = (query: Record<string, string> = {}) => pageQuerySchema.parse(query);

describe('the count cache', () => {
  function clockedCache(maxEntries = 10) {
    // Not 0: lru-cache reads a start time of 0 as "no TTL".
    const clock = { now: 10_000 };
    const cache = createCountCache({ ttlMs: 1_000, maxEntries, perf: { now: () => clock.now } });
    const loads: string[] = [];
    const load = (key: string, value: number) => () => {
      loads.push(key);
      return Promise.resolve(value);
    };
    return { clock, cache, loads, load };
  }

  it('shares one load among concurrent misses of a key (single flight)', async () => {
    const { cache, loads } = clockedCache();
    let release!: (value: number) => void;
    const slow = () => {
      loads.push('a');
      return new Promise<number>((resolve) => (release = resolve));
    };
    const waiting = Array.from({ length: 20 }, () => cache.get('a', slow));
    release(7);
    expect(await Promise.all(waiting)).toEqual(Array(20).fill(7));
    expect(loads).toEqual(['a']);
  });

  it('keeps a count for its TTL, then loads it again', async () => {
    const { clock, cache, loads, load } = clockedCache();
    expect(await cache.get('a', load('a', 1))).toBe(1);
    clock.now += 999;
    expect(await cache.get('a', load('a', 2))).toBe(1);
    clock.now += 2;
    expect(await cache.get('a', load('a', 3))).toBe(3);
    expect(loads).toEqual(['a', 'a']);
  });

  it('keeps no failure: the next call loads again', async () => {
    const { cache } = clockedCache();
    await expect(cache.get('a', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await cache.get('a', () => Promise.resolve(5))).toBe(5);
  });

  it('holds at most maxEntries counts, dropping the least recently used', async () => {
    const { cache, loads, load } = clockedCache(2);
    await cache.get('a', load('a', 1));
    await cache.get('b', load('b', 2));
    await cache.get('a', load('a', 1));
    await cache.get('c', load('c', 3));
    await cache.get('a', load('a', 1));
    await cache.get('b', load('b', 2));
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('is bounded and short-lived by the named limits', () => {
    expect(countCacheLimits.ttlMs).toBeLessThanOrEqual(10_000);
    expect(countCacheLimits.maxEntries).toBeGreaterThan(0);
  });
});

describe('count statements', () => {
  it('count listings from the base table unless the filter names a joined field', () => {
    const plain = buildPageStatements(listingsSource, request(), activeListings);
    expect(plain.count.text).toBe('SELECT count(*) AS total_count FROM "indexer".listings l WHERE l.status = $1');
    expect(buildPageStatements(listingsSource, request({ filter: 'seller=0xab,price>5' }), activeListings).count.text).not.toMatch(/JOIN/);
    for (const filter of ['rarity=1', 'price>5|editionName=*a', 'gender=1', 'EDITIONID=2']) {
      expect(buildPageStatements(listingsSource, request({ filter }), activeListings).count.text, filter).toMatch(
        /LEFT JOIN "indexer"\.nfts n .* LEFT JOIN "indexer"\.editions e/s,
      );
    }
    expect(buildPageStatements(listingsSource, request(), activeListings).page.text).toMatch(/LEFT JOIN/);
  });

  it('key counts by list and compiled conditions, so equivalent spellings share and other wallets do not', () => {
    const key = (filter: string | undefined, owner = demoAddress(1)) =>
      buildPageStatements(nftsSource, request(filter === undefined ? {} : { filter }), ownedNfts(owner)).countKey;
    expect(key('rarity=1')).toBe(key(' Rarity = +1 '));
    expect(key('rarity=1', demoAddress(1))).not.toBe(key('rarity=1', demoAddress(2)));
    expect(key('rarity=1')).not.toBe(key('rarity=2'));
    expect(key(undefined)).toBe(key('  '));
    expect(buildPageStatements(salesSource, request({ page: '3' })).countKey).toBe(buildPageStatements(salesSource, request({ pageSize: '7' })).countKey);
    // A reload after an event, with its version, gets a count of its own; clients reloading after the same event share it.
    expect(buildPageStatements(salesSource, request({ v: '7' })).countKey).not.toBe(buildPageStatements(salesSource, request()).countKey);
    expect(buildPageStatements(salesSource, request({ v: '7' })).countKey).toBe(buildPageStatements(salesSource, request({ v: '7', page: '2' })).countKey);
  });
});

describe('through the gateway', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ demoData: demoSizes.demo });
  });
  afterAll(() => stack?.stop());

  it('reports the same totalCount as a count over the joined read model, for filters with and without joined fields', async () => {
    const joinedCount = async (where: string) =>
      Number(
        (
          await stack.sql<{ n: string }>(`SELECT count(*) AS n FROM indexer.listings l LEFT JOIN indexer.nfts n ON n.token_id = l.token_id
        LEFT JOIN indexer.editions e ON e.edition_id = coalesce(l.edition_id, n.edition_id) WHERE l.status = 'Active' AND ${where}`)
        )[0]!.n,
      );
    const cases = [
      { filter: '', where: 'true' },
      { filter: 'price>1000000000000000', where: 'l.price > 1000000000000000' },
      { filter: 'rarity=2', where: 'coalesce(e.rarity, 0) = 2' },
      { filter: 'gender=1|price<5', where: '(coalesce(n.gender, 0) = 1 OR l.price < 5)' },
    ];
    for (const { filter, where } of cases) {
      const expected = await joinedCount(where);
      expect(expected, filter).toBeGreaterThan(1);
      const response = await stack.get(`/marketplace/listings?${new URLSearchParams({ filter, pageSize: '1' })}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { totalCount: number }).totalCount, filter).toBe(expected);
    }
  });

  it('derives the total from a page that is not full, and never reports fewer rows than a page shows', async () => {
    const response = await stack.get(`/accounts/${demoAddress(1)}/staking?pageSize=100`);
    const body = (await response.json()) as { items: unknown[]; totalCount: number };
    expect(body.items.length).toBeLessThan(100);
    expect(body.totalCount).toBe(body.items.length);
  });

  it('gives a public GET Cache-Control for shared caches and an ETag, and answers a matching If-None-Match with 304', async () => {
    const first = await stack.get('/editions?pageSize=3');
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toBe(
      `public, max-age=0, s-maxage=${publicCache.sMaxAgeSeconds}, stale-while-revalidate=${publicCache.staleWhileRevalidateSeconds}`,
    );
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await stack.get('/editions?pageSize=3', { headers: { 'if-none-match': ifNoneMatch } });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
      expect(await again.text()).toBe('');
    }
    const other = await stack.get('/editions?pageSize=4', { headers: { 'if-none-match': etag } });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(etag);
  });

  it('counts again for a `v` it has not counted under: the reload after an event gets the total after it, while one without `v` keeps the shared count', async () => {
    const total = async (query: string) => ((await (await stack.get(`/marketplace/listings?pageSize=1${query}`)).json()) as { totalCount: number }).totalCount;
    const before = await total('');
    await stack.sql(
      `INSERT INTO indexer.listings (token_id, seller, price, status, edition_id, listed_at_block, updated_at_block, tx_hash) VALUES (990000001, $1, 1, 'Active', 1, 1, 1, '0x1')`,
      [demoAddress(3)],
    );
    try {
      expect(await total('')).toBe(before);
      expect(await total('&v=990000001')).toBe(before + 1);
    } finally {
      await stack.sql(`DELETE FROM indexer.listings WHERE token_id = 990000001`);
    }
  });

  it("answers every list the same with a version `v` as without it, so only a shared cache's key changes, and refuses one over the limit", async () => {
    const lists = [
      '/editions',
      `/accounts/${demoAddress(1)}/nfts`,
      '/marketplace/listings',
      `/accounts/${demoAddress(1)}/staking`,
      `/accounts/${demoAddress(1)}/forge-requests`,
      '/transparency/sales',
    ];
    for (const path of lists) {
      const plain = await stack.get(`${path}?pageSize=5`);
      const versioned = await stack.get(`${path}?pageSize=5&v=${encodeURIComponent('812345-140000')}`);
      expect(versioned.status, path).toBe(200);
      expect(await versioned.text(), path).toBe(await plain.text());
      expect(versioned.headers.get('etag'), path).toBe(plain.headers.get('etag'));
      const tooLong = await stack.get(`${path}?v=${'9'.repeat(pageQueryLimits.versionLength + 1)}`);
      expect(tooLong.status, path).toBe(422);
      expect(((await tooLong.json()) as { errors: Record<string, string[]> }).errors, path).toHaveProperty('v');
    }
  });

  it('puts the ETag and Cache-Control on the other public GETs too', async () => {
    for (const path of ['/transparency/summary', `/accounts/${demoAddress(1)}/referral`, '/transparency/sales', '/marketplace/listings']) {
      const response = await stack.get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('etag'), path).toBeTruthy();
      expect(response.headers.get('cache-control'), path).toMatch(/s-maxage=/);
    }
  });

  it("leaves a handler's own Cache-Control alone (the docs page and its files)", async () => {
    const docs = await stack.get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('cache-control')).toBe('no-cache');
    expect(docs.headers.get('etag')).toBeNull();
  });

  it('never marks a problem or a protected response as cacheable', async () => {
    const problem = await stack.get('/editions?filter=nonsense=1');
    expect(problem.status).toBe(422);
    expect(problem.headers.get('etag')).toBeNull();
    expect(problem.headers.get('cache-control') ?? '').not.toMatch(/public|s-maxage/);
    const token = await stack.idp.signToken({ uid: 'cache-me', email: 'cache-me@example.com', name: 'Cache Me' });
    const me = await stack.get('/accounts/me', { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect(me.headers.get('etag')).toBeNull();
  });
});
