import { expect } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import type { TestStack } from '../../support/stack';

/** Values above 2^64, which a JSON number or a 64-bit integer would mangle. */
export const above64 = (offset: number) => (2n ** 64n + BigInt(offset)).toString();

/** A lowercase wallet made of one repeated byte, so it has hex letters to upper-case. */
export const wallet = (byte: string) => `0x${byte.repeat(20)}`;

/** The same address with every other hex letter upper-cased, as a checksummed address might arrive. */
export const mixedCase = (address: string) => `0x${[...address.slice(2)].map((char, index) => (index % 2 ? char.toUpperCase() : char)).join('')}`;

export async function createSchema(stack: TestStack): Promise<void> {
  await createIndexerSchema({ query: (text: string) => stack.sql(text) } as never);
}

/** Inserts fixture rows with parameters; every row of one call has the same columns. */
export async function insertRows(stack: TestStack, table: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]!);
  const values: unknown[] = [];
  const tuples = rows.map((row) => `(${columns.map((column) => `$${values.push(row[column] ?? null)}`).join(', ')})`);
  await stack.sql(`INSERT INTO indexer.${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function getJson(stack: TestStack, path: string, query: Record<string, string> = {}): Promise<JsonResponse> {
  const search = new URLSearchParams(query).toString();
  const response = await stack.get(search ? `${path}?${search}` : path);
  return { status: response.status, headers: response.headers, body: await response.json() };
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  page: number;
  pageSize: number;
  nextCursor?: string;
}

/** A 200 page, asserting the envelope on the way: nextCursor exactly while more rows follow. */
export async function getPage<T>(stack: TestStack, path: string, query: Record<string, string> = {}): Promise<Page<T>> {
  const { status, headers, body } = await getJson(stack, path, query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(headers.get('content-type')).toBe('application/json');
  const page = body as Page<T>;
  const more = !query.after && page.items.length > 0 && (page.page - 1) * page.pageSize + page.items.length < page.totalCount;
  expect(Object.keys(body).sort()).toEqual(['items', ...(more || (query.after && page.nextCursor) ? ['nextCursor'] : []), 'page', 'pageSize', 'totalCount']);
  return page;
}

/** Walks every page at `pageSize` and returns the items in the order served, checking totalCount on each page. */
export async function allPages<T>(stack: TestStack, path: string, query: Record<string, string>, pageSize: number): Promise<T[]> {
  const first = await getPage<T>(stack, path, { ...query, pageSize: String(pageSize) });
  const items = [...first.items];
  const pages = Math.ceil(first.totalCount / pageSize);
  for (let page = 2; page <= pages; page++) {
    const next = await getPage<T>(stack, path, { ...query, pageSize: String(pageSize), page: String(page) });
    expect(next.totalCount).toBe(first.totalCount);
    expect(next.items.length).toBe(page < pages ? pageSize : first.totalCount - (pages - 1) * pageSize);
    items.push(...next.items);
  }
  expect(items.length).toBe(first.totalCount);
  return items;
}

/** A 422 problem naming `field`. */
export async function expectValidationProblem(stack: TestStack, path: string, query: Record<string, string>, field: string): Promise<void> {
  const { status, headers, body } = await getJson(stack, path, query);
  expect(status).toBe(422);
  expect(headers.get('content-type')).toBe('application/problem+json');
  expect(body).toMatchObject({ status: 422, title: expect.any(String), detail: expect.any(String) });
  expect(Object.keys(body.errors)).toEqual([field]);
  expect(JSON.stringify(body)).not.toMatch(/SELECT|indexer\.|\bat .+\.ts/);
}

type Key = string | number | boolean;
export type SortKey<T> = (item: T) => Key;

/** Compares like PostgreSQL does for the fixture's values: numbers, big-integer strings, booleans, C-collated text. */
export function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string' && /^-?\d+$/.test(a) && /^-?\d+$/.test(b)) {
    const diff = BigInt(a) - BigInt(b);
    return diff < 0n ? -1 : diff > 0n ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The expected order: the key in `direction`, then the unique tie-breaker. */
export function sortedBy<T>(items: readonly T[], key: SortKey<T>, direction: 'asc' | 'desc', tieBreaker: SortKey<T>, tieDirection: 'asc' | 'desc'): T[] {
  const sign = (d: 'asc' | 'desc') => (d === 'asc' ? 1 : -1);
  return [...items].sort((a, b) => sign(direction) * compareKeys(key(a), key(b)) || sign(tieDirection) * compareKeys(tieBreaker(a), tieBreaker(b)));
}

export interface ListContract<T> {
  /** The endpoint path, address included. */
  path: string;
  /** Every item the server's own conditions admit, as the DTO the client must see. */
  visible: readonly T[];
  /** The endpoint's field map: every key needs a filter case and is sorted both ways. */
  fields: Readonly<Record<string, unknown>>;
  /** How each mapped field reads on the DTO, for the expected order. */
  sortKeys: Record<string, SortKey<T>>;
  defaultOrder: { field: string; direction: 'asc' | 'desc' };
  tieBreaker: { key: SortKey<T>; direction: 'asc' | 'desc' };
  /** Filter expressions and the DTOs each must select. */
  filters: ReadonlyArray<{ filter: string; field: string; matches: (item: T) => boolean; selectsAllOrNone?: true }>;
  /** A field that is a column of the table but not in the map. */
  unmappedField: string;
}

/** The behaviour every paged list shares, checked against purpose-built fixtures. */
export function listContractCases<T>(contract: ListContract<T>) {
  const inDefaultOrder = (items: readonly T[]) =>
    sortedBy(items, contract.sortKeys[contract.defaultOrder.field]!, contract.defaultOrder.direction, contract.tieBreaker.key, contract.tieBreaker.direction);
  return {
    async defaultOrder(stack: TestStack) {
      const page = await getPage<T>(stack, contract.path, { pageSize: '100' });
      expect(page.totalCount).toBe(contract.visible.length);
      expect(page.items).toStrictEqual(inDefaultOrder(contract.visible));
    },
    async everyFilterField(stack: TestStack) {
      expect(new Set(contract.filters.map((f) => f.field))).toEqual(new Set(Object.keys(contract.fields)));
      for (const { filter, matches, selectsAllOrNone } of contract.filters) {
        const expected = inDefaultOrder(contract.visible.filter(matches));
        if (!selectsAllOrNone) {
          expect(expected.length, `fixture selects something for ${filter}`).toBeGreaterThan(0);
          expect(expected.length, `fixture leaves something out for ${filter}`).toBeLessThan(contract.visible.length);
        }
        const page = await getPage<T>(stack, contract.path, { filter, pageSize: '100' });
        expect(page.items, filter).toStrictEqual(expected);
        expect(page.totalCount, filter).toBe(expected.length);
      }
    },
    async everySortField(stack: TestStack) {
      expect(Object.keys(contract.sortKeys).sort()).toEqual(Object.keys(contract.fields).sort());
      for (const [field, key] of Object.entries(contract.sortKeys)) {
        for (const direction of ['asc', 'desc'] as const) {
          const page = await getPage<T>(stack, contract.path, { orderBy: `${field} ${direction}`, pageSize: '100' });
          const expected = sortedBy(contract.visible, key, direction, contract.tieBreaker.key, contract.tieBreaker.direction);
          expect(page.items, `${field} ${direction}`).toStrictEqual(expected);
        }
      }
    },
    /** Pages of 2 over a key with ties: each row exactly once, in the order of the whole list. */
    async pagingWithTies(stack: TestStack, field: string) {
      const key = contract.sortKeys[field]!;
      const keys = contract.visible.map((item) => String(key(item)));
      expect(new Set(keys).size, 'the fixture has ties on the key').toBeLessThan(keys.length);
      for (const direction of ['asc', 'desc'] as const) {
        const items = await allPages<T>(stack, contract.path, { orderBy: `${field} ${direction}` }, 2);
        expect(items).toStrictEqual(sortedBy(contract.visible, key, direction, contract.tieBreaker.key, contract.tieBreaker.direction));
        expect(new Set(items.map((item) => JSON.stringify(item))).size).toBe(contract.visible.length);
      }
    },
    async unmappedFields(stack: TestStack) {
      await expectValidationProblem(stack, contract.path, { filter: `${contract.unmappedField}=1` }, 'filter');
      await expectValidationProblem(stack, contract.path, { orderBy: `${contract.unmappedField} desc` }, 'orderBy');
      await expectValidationProblem(stack, contract.path, { filter: `nonsense=1` }, 'filter');
    },
  };
}
