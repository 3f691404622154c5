import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editionsSource } from '@hatchery/core/indexer/editions';
import { forgeRequestsSource } from '@hatchery/core/indexer/forge-requests';
import { listingsSource } from '@hatchery/core/indexer/listings';
import { nftsSource } from '@hatchery/core/indexer/nfts';
import { salesSource } from '@hatchery/core/indexer/sales';
import { stakingSource } from '@hatchery/core/indexer/staking';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, allPages, createSchema, getJson, getPage, insertRows, wallet, type Page } from './support';

/**
 * Cursor paging: walking any list by `after` yields
 * exactly what an offset walk of the same, frozen data yields, in the same
 * order; rows indexed during a walk never make it repeat or skip one; and a
 * cursor is client input that only ever gets a 200 or a 422 naming `after`.
 */
let stack: TestStack;
const owner = wallet('c1');
const names = ['Ember', 'ember', 'Édith', 'Zed', '', 'Ash', 'ash'];
const pick = <T>(values: readonly T[], i: number) => values[i % values.length]!;

const lists = {
  editions: { path: '/editions', fields: Object.keys(editionsSource.fields) },
  nfts: { path: `/accounts/${owner}/nfts`, fields: Object.keys(nftsSource.fields) },
  listings: { path: '/marketplace/listings', fields: Object.keys(listingsSource.fields) },
  staking: { path: `/accounts/${owner}/staking`, fields: Object.keys(stakingSource.fields) },
  forgeRequests: { path: `/accounts/${owner}/forge-requests`, fields: Object.keys(forgeRequestsSource.fields) },
  sales: { path: '/transparency/sales', fields: Object.keys(salesSource.fields) },
} as const;

beforeAll(async () => {
  stack = await startTestStack();
  await createSchema(stack);
  // Few distinct values per column, so every order has ties for its tie-breaker to settle; some NFTs and listings
  // name an edition or a token with no row, so their joined fields are the defaults.
  await insertRows(
    stack,
    'editions',
    Array.from({ length: 24 }, (_, i) => ({
      edition_id: i + 1,
      name: pick(names, i),
      art_uri: `ipfs://${i}`,
      health: i % 3,
      skill: 1,
      morale: 2,
      rarity: i % 3,
      max_supply: 10,
      minted: i % 4,
      mint_start: 0,
      mint_end: 1,
      price: i % 5 === 0 ? above64(i) : String(i % 4),
      distribution: i % 2,
      active: i % 3 !== 0,
    })),
  );
  await insertRows(
    stack,
    'nfts',
    Array.from({ length: 30 }, (_, i) => ({
      token_id: i % 7 === 0 ? above64(i) : String(i + 1),
      owner: i % 6 === 5 ? wallet('c2') : owner,
      edition_id: i % 5 === 0 ? 999 : (i % 4) + 1,
      gender: i % 2,
      nft_name: pick(names, i),
      staked: i % 3 === 0,
      burned: i % 11 === 10,
    })),
  );
  await insertRows(
    stack,
    'listings',
    Array.from({ length: 30 }, (_, i) => ({
      token_id: i % 4 === 3 ? String(1000 + i) : String(i + 1),
      seller: pick([owner, wallet('c2'), wallet('c3')], i),
      price: i % 6 === 0 ? above64(1) : String(100 * (i % 3)),
      status: i % 7 === 6 ? 'Sold' : 'Active',
      edition_id: i % 5 === 0 ? null : (i % 3) + 1,
      listed_at_block: String(10 + (i % 4)),
      updated_at_block: String(20 + i),
      tx_hash: `0x${i}`,
    })),
  );
  await insertRows(
    stack,
    'staking_pairs',
    Array.from({ length: 24 }, (_, i) => ({
      pair_id: String(i + 1),
      staker: i % 5 === 4 ? wallet('c2') : owner,
      male_id: String(2 * i),
      female_id: String(2 * i + 1),
      matched: i % 2 === 0,
      staked_at: String(500 + (i % 3)),
      last_claim_at: String(600 + (i % 4)),
      status: i % 6 === 5 ? 'Unstaked' : 'Staked',
    })),
  );
  await insertRows(
    stack,
    'forge_requests',
    Array.from({ length: 24 }, (_, i) => ({
      request_id: i % 8 === 7 ? above64(i) : String(i + 1),
      buyer: i % 5 === 4 ? wallet('c2') : owner,
      tier: (i % 3) + 1,
      status: pick(['Requested', 'Fulfilled', 'Cancelled'], i),
      token_id: null,
      edition_id: null,
      block_number: String(70 + (i % 3)),
      fulfilled_at_block: null,
    })),
  );
  await insertRows(
    stack,
    'sales',
    Array.from({ length: 30 }, (_, i) => ({
      id: `sale-${String(i).padStart(2, '0')}`,
      token_id: String(i % 4),
      seller: pick([owner, wallet('c2')], i),
      buyer: pick([wallet('c3'), owner, wallet('c2')], i),
      price: String(i),
      platform_fee: '1',
      royalty: '2',
      block_number: i % 9 === 0 ? above64(0) : String(40 + (i % 3)),
    })),
  );
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Every page by cursor, from the first, checking each page's envelope. */
async function cursorWalk<T>(path: string, query: Record<string, string>): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 500; pages++) {
    const page: Page<T> = await getPage<T>(stack, path, { ...query, ...(after && { after }) });
    items.push(...page.items);
    after = page.nextCursor;
    if (!after) return items;
  }
  throw new Error('the walk did not end');
}

describe('a walk by cursor', () => {
  for (const [name, list] of Object.entries(lists)) {
    it(`yields what an offset walk yields, in the same order, for any order of ${name}’s fields`, async () => {
      const orderBy = fc
        .uniqueArray(fc.constantFrom(...list.fields), { minLength: 1, maxLength: 3 })
        .chain((fields) => fc.tuple(...fields.map((field) => fc.constantFrom(`${field} asc`, `${field} desc`, field))).map((terms) => terms.join(', ')));
      await fc.assert(
        fc.asyncProperty(fc.option(orderBy, { freq: 5 }), fc.integer({ min: 1, max: 9 }), async (order, pageSize) => {
          const query: Record<string, string> = order === null ? {} : { orderBy: order };
          const byOffset = await allPages(stack, list.path, query, pageSize);
          const byCursor = await cursorWalk(list.path, { ...query, pageSize: String(pageSize) });
          expect(byCursor).toEqual(byOffset);
          expect(byCursor.length).toBeGreaterThan(0);
        }),
        { numRuns: 12 },
      );
    }, 120_000);
  }

  it('holds to a filter too, and its totalCount stays the list’s', async () => {
    const query = { filter: 'price>0', orderBy: 'editionName desc, price' };
    const byOffset = await allPages(stack, lists.listings.path, query, 4);
    const first = await getPage<unknown>(stack, lists.listings.path, { ...query, pageSize: '4' });
    const second = await getPage<unknown>(stack, lists.listings.path, { ...query, pageSize: '4', after: first.nextCursor! });
    expect(second.totalCount).toBe(first.totalCount);
    expect([...first.items, ...second.items]).toEqual(byOffset.slice(0, 8));
    expect(await cursorWalk(lists.listings.path, { ...query, pageSize: '4' })).toEqual(byOffset);
  });
});

describe('a cursor page at the edge', () => {
  it('is cached like any public page: its URL, v included, is its key', async () => {
    const { nextCursor } = await getPage<unknown>(stack, '/transparency/sales', { pageSize: '3' });
    const response = await stack.get(`/transparency/sales?pageSize=3&after=${nextCursor}&v=7`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toMatch(/^public, max-age=0, s-maxage=\d+/);
    expect(response.headers.get('etag')).toMatch(/^"/);
  });
});

describe('a walk while the chain moves', () => {
  it('returns every row present throughout exactly once, the rows indexed after its position, and none indexed before it', async () => {
    type Sale = { tokenId: string; blockNumber: string; price: string };
    const path = '/transparency/sales';
    const query = { orderBy: 'blockNumber desc', pageSize: '4' };
    const before = await allPages<Sale>(stack, path, { orderBy: 'blockNumber desc' }, 100);
    const first = await getPage<Sale>(stack, path, query);
    // Indexed mid-walk, as the indexer writes: one sale above the walk's position (newer block), one below it.
    await insertRows(stack, 'sales', [
      { id: 'sale-new-high', token_id: '77', seller: owner, buyer: wallet('c3'), price: '7001', platform_fee: '1', royalty: '1', block_number: above64(5) },
      { id: 'sale-new-low', token_id: '78', seller: owner, buyer: wallet('c3'), price: '7002', platform_fee: '1', royalty: '1', block_number: '1' },
    ]);
    // A row already passed is removed (a reorg): nothing shifts.
    await stack.sql(`DELETE FROM indexer.sales WHERE id = 'sale-00'`);
    const rest: Sale[] = [];
    let after = first.nextCursor;
    while (after) {
      const page = await getPage<Sale>(stack, path, { ...query, after });
      rest.push(...page.items);
      after = page.nextCursor;
    }
    const walked = [...first.items, ...rest];
    const key = (sale: Sale) => `${sale.tokenId}/${sale.price}`;
    for (const sale of before)
      expect(
        walked.filter((each) => key(each) === key(sale)),
        key(sale),
      ).toHaveLength(1);
    expect(walked.map((sale) => sale.price)).toContain('7002');
    expect(walked.map((sale) => sale.price)).not.toContain('7001');
    expect(walked).toHaveLength(before.length + 1);
    await stack.sql(`DELETE FROM indexer.sales WHERE id LIKE 'sale-new-%'`);
  });
});

describe('a cursor is client input', () => {
  const path = '/transparency/sales';
  const refuses = async (query: Record<string, string>, why: RegExp) => {
    const { status, headers, body } = await getJson(stack, path, query);
    expect(status, JSON.stringify(query)).toBe(422);
    expect(headers.get('content-type')).toBe('application/problem+json');
    expect(Object.keys(body.errors), JSON.stringify(query)).toEqual(['after']);
    expect(body.errors.after.join(' ')).toMatch(why);
    expect(JSON.stringify(body)).not.toMatch(/SELECT|indexer\./);
  };
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('is refused, naming after, when malformed, truncated, re-encoded or hand-edited', async () => {
    const { nextCursor } = await getPage<unknown>(stack, path, { pageSize: '2' });
    const cursor = nextCursor!;
    const [binding, ...keys] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as string[];
    for (const bad of [
      '!!!',
      'abc',
      cursor.slice(0, -3),
      `${Buffer.from(Buffer.from(cursor, 'base64url')).toString('base64')}=`,
      encode({ a: 1 }),
      encode([binding]),
      encode([binding, ...keys, 'x']),
      encode([binding, 1, 2]),
      encode(null),
    ]) {
      await refuses({ pageSize: '2', after: bad }, /cursor/);
    }
    await refuses({ pageSize: '2', after: encode(['another-list', ...keys]) }, /another list, filter or order/);
    await refuses({ pageSize: '2', after: encode([binding, 'not a number', keys[1]]) }, /wrong type/);
    await refuses({ pageSize: '2', after: encode([binding, `1) OR 1=1 --`, keys[1]]) }, /wrong type/);
    await refuses({ pageSize: '2', after: 'a'.repeat(2049) }, /2048/);
    await refuses({ pageSize: '2', after: cursor, page: '2' }, /page/);
  });

  it('is refused with another list, filter or order than its own', async () => {
    const { nextCursor } = await getPage<unknown>(stack, path, { pageSize: '2', filter: 'tokenId>1' });
    await refuses({ pageSize: '2', after: nextCursor! }, /another list, filter or order/);
    await refuses({ pageSize: '2', filter: 'tokenId>2', after: nextCursor! }, /another list, filter or order/);
    await refuses({ pageSize: '2', filter: 'tokenId>1', orderBy: 'seller', after: nextCursor! }, /another list, filter or order/);
    const { status, body } = await getJson(stack, '/editions', { pageSize: '2', after: nextCursor! });
    expect([status, Object.keys(body.errors)]).toEqual([422, ['after']]);
    // Its own filter and order, whatever the page size: the walk goes on.
    expect((await getJson(stack, path, { pageSize: '5', filter: 'tokenId>1', after: nextCursor! })).status).toBe(200);
  });
});
