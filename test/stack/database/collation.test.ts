import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { migrate } from '@hatchery/core/migrate';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * The same filter and sort select and order the same rows whatever collation
 * the indexer's columns have: the local cluster's C.UTF-8, or a linguistic one
 * (ICU's root locale here) as a database created with another default has.
 */
const names = ['Bob', 'ali', 'Ali', '[ali]', 'bob', 'Zed', 'zed', 'éclair', 'Eve', '(x)', 'ali reza', 'alí'];
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await createIndexerSchema({ query: (text: string) => stack.sql(text) } as never);
  for (const [i, name] of names.entries())
    await stack.sql(`INSERT INTO indexer.editions VALUES ($1, $2, '', 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, true)`, [i + 1, name]);
});
afterAll(() => stack?.stop());

const ids = async (query: Record<string, string>) => {
  const response = await stack.get(`/editions?${new URLSearchParams({ pageSize: '100', ...query })}`);
  expect(response.status, JSON.stringify(query)).toBe(200);
  return ((await response.json()) as { items: Array<{ id: string }> }).items.map((item) => Number(item.id));
};
const byName = (predicate: (name: string) => boolean) => names.flatMap((name, i) => (predicate(name) ? [i + 1] : []));
// .NET's default comparer, which Gridify's ordering tests use, is culture-aware: ICU's root collation, as Node's Intl has it.
const culture = new Intl.Collator('und').compare;
const sortedIds = (direction: 1 | -1) =>
  names
    .map((name, i) => ({ name, id: i + 1 }))
    .sort((a, b) => direction * culture(a.name, b.name))
    .map((each) => each.id);

const requests: Array<{ query: Record<string, string>; expected: number[] }> = [
  // Gridify compares ordinally: code point order, where 'B' < 'a'.
  { query: { filter: 'name>ali' }, expected: byName((name) => name > 'ali') },
  { query: { filter: 'name<=Zed' }, expected: byName((name) => name <= 'Zed') },
  { query: { filter: 'name>=ALI/i' }, expected: byName((name) => name.toUpperCase() >= 'ALI') },
  { query: { orderBy: 'name' }, expected: sortedIds(1) },
  { query: { orderBy: 'name desc' }, expected: sortedIds(-1) },
];

describe.each([
  { collation: 'the database default (C.UTF-8)', column: 'default' },
  { collation: "ICU's root locale", column: 'und-x-icu' },
])('text comparisons and name order, with the names in $collation', ({ column }) => {
  beforeAll(async () => {
    await stack.sql(`ALTER TABLE indexer.editions ALTER COLUMN name TYPE text COLLATE "${column}"`);
    // The two collations disagree on these requests' inputs, so each request below can tell them apart.
    expect((await stack.sql<{ differs: boolean }>(`SELECT ('Bob' COLLATE "C" > 'ali') <> ('Bob' COLLATE "und-x-icu" > 'ali') AS differs`))[0]!.differs).toBe(
      true,
    );
  });

  it.each(requests)('$query', async ({ query, expected }) => {
    expect(await ids(query)).toEqual(expected);
  });
});

describe('a PostgreSQL without ICU', () => {
  it('stops the migrations with the reason, before any request could sort names', async () => {
    await stack.sql('CREATE DATABASE without_icu');
    const url = new URL(stack.databaseUrl);
    url.pathname = '/without_icu';
    const hide = new pg.Client({ connectionString: url.toString() });
    await hide.connect();
    // The catalog is per database: here the collation is gone as on a server built without ICU.
    await hide.query(`ALTER COLLATION pg_catalog."und-x-icu" RENAME TO "und-x-icu-hidden"`);
    await hide.end();
    await expect(migrate(url.toString())).rejects.toThrow(/needs PostgreSQL built with ICU/);
  });
});
