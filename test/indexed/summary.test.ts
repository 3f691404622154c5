import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { indexerTable } from '@hatchery/core/indexer/names';
import { limits } from '@hatchery/core/limits';
import { startTestStack, type TestStack } from '../support/stack';
import { above64, createSchema, getJson, insertRows, wallet } from './support';

let stack: TestStack;
/** Every statement any pg client in this process sends: the handlers run in-process behind the local gateway. */
const statements = vi.spyOn(pg.Client.prototype, 'query');
/** Summary rounds: the only statement that reads token_transfers. */
const summaryRounds = () => statements.mock.calls.filter(([text]) => typeof text === 'string' && text.includes(indexerTable('token_transfers'))).length;

/** Moves the process clock past the cache lifetime (Date only, then frozen; timers and sockets keep real time). */
const pastCacheLifetime = () => {
  vi.setSystemTime(Date.now() + limits.summaryCacheMs + 1_000);
};

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  vi.useRealTimers();
  await stack?.stop();
});
afterEach(() => {
  statements.mockClear();
});

const summary = () => getJson(stack, '/transparency/summary');

const alice = wallet('ab');
const bob = wallet('cd');
const sale = (id: string, price: string) => ({ id, token_id: '1', seller: alice, buyer: bob, price, platform_fee: '0', royalty: '0', block_number: '1' });
const expected = {
  salesCount: 3,
  totalVolume: (2n * 2n ** 64n + 503n).toString(),
  nftCount: 3,
  editionCount: 2,
  totalTokenTransferred: (2n ** 64n + 15n).toString(),
};

describe('GET /transparency/summary', () => {
  it('answers zeros before the indexer has created its tables', async () => {
    const { status, body } = await summary();
    expect(status).toBe(200);
    expect(body).toStrictEqual({ salesCount: 0, totalVolume: '0', nftCount: 0, editionCount: 0, totalTokenTransferred: '0' });
  });

  it('sums in the database, exactly beyond 64 bits; 50 concurrent calls on a cold cache make one query round', async () => {
    await createSchema(stack);
    await insertRows(stack, 'sales', [sale('s1', above64(1)), sale('s2', above64(2)), sale('s3', '500')]);
    await insertRows(stack, 'editions', ['1', '2'].map((id) => ({
      edition_id: id, name: `e${id}`, art_uri: '', health: 0, skill: 0, morale: 0, rarity: 0, max_supply: '1', minted: '0',
      mint_start: '0', mint_end: '0', price: '0', distribution: 0, active: true,
    })));
    await insertRows(stack, 'nfts', ['1', '2', '3', '4'].map((id) => ({
      token_id: id, owner: alice, edition_id: '1', gender: 0, nft_name: `n${id}`, staked: id === '2', burned: id === '4',
    })));
    await insertRows(stack, 'token_transfers', [
      { id: 't1', from_addr: alice, to_addr: bob, value: above64(10), block_number: '1' },
      { id: 't2', from_addr: bob, to_addr: alice, value: '5', block_number: '2' },
    ]);
    pastCacheLifetime();
    statements.mockClear();

    const responses = await Promise.all(Array.from({ length: 50 }, () => summary()));
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    for (const { body } of responses) expect(body).toStrictEqual(expected);
    expect(summaryRounds()).toBe(1);
  });

  it('serves a second call within the cache lifetime without a query, then reads again once it has passed', async () => {
    await insertRows(stack, 'sales', [sale('s4', '7')]);
    statements.mockClear();
    const cached = await summary();
    expect(cached.body).toStrictEqual(expected);
    expect(summaryRounds()).toBe(0);

    pastCacheLifetime();
    const fresh = await summary();
    expect(fresh.body).toStrictEqual({ ...expected, salesCount: 4, totalVolume: (BigInt(expected.totalVolume) + 7n).toString() });
    expect(summaryRounds()).toBe(1);
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
    await insertRows(stack, 'sales', [sale('s5', '1')]);
    statements.mockClear();
    // The clock has not moved since the failures, so a cached failure would show here.
    const recovered = await summary();
    expect(recovered.status).toBe(200);
    expect(recovered.body.salesCount).toBe(5);
    expect(summaryRounds()).toBe(1);
  });
});
