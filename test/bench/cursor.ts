import type pg from 'pg';
import { activeListings, listingsSource } from '@hatchery/core/indexer/listings';
import { salesSource } from '@hatchery/core/indexer/sales';
import { orderBySql, type Params } from '@hatchery/core/query/compile';
import { encodeCursor, keyColumns, keysOf } from '@hatchery/core/query/cursor';
import { buildPageStatements, compilePage, pageQuerySchema, type ListSource } from '@hatchery/core/query/page-query';
import type { BenchSection } from './context';
import { httpGet, measureInChild, printTable, type Figures, type Row } from './measure';

/**
 * Cursor pages against the first page of the same list, at 100 rows a page,
 * measured in the same run: sales (1M rows) at row 500,000 and at its last
 * row, listings (140k active) at row 100,000, and the offset page 200 for
 * contrast. Then a whole walk of the sales by cursor (BENCH_CURSOR_WALK=0
 * skips it).
 */
interface Depth {
  list: string;
  source: ListSource;
  path: string;
  serverConditions?: (params: Params) => string[];
  /** The row the cursor stands on (1-based), or 'last'. */
  at: number | 'last';
}

const depths: Depth[] = [
  { list: 'sales', source: salesSource, path: '/transparency/sales', at: 500_000 },
  { list: 'sales', source: salesSource, path: '/transparency/sales', at: 'last' },
  { list: 'listings', source: listingsSource, path: '/marketplace/listings', serverConditions: activeListings, at: 100_000 },
];

const pageSize = 100;

/** The cursor of the row at `at` in the list's default order, as the page ending there would carry it. */
async function cursorAt(sql: pg.Pool, depth: Depth): Promise<{ cursor: string; row: number }> {
  const request = pageQuerySchema.parse({ pageSize: String(pageSize) });
  const { binding, count } = buildPageStatements(depth.source, request, depth.serverConditions);
  const total = Number((await sql.query<{ total_count: string }>(count.text, count.values)).rows[0]!.total_count);
  const row = depth.at === 'last' ? total : depth.at;
  const { where, terms, params } = compilePage(depth.source, request, depth.serverConditions);
  const joins = depth.source.joins ? ` ${depth.source.joins}` : '';
  const offset = params.add(row - 1);
  const { rows } = await sql.query(
    `SELECT ${keyColumns(terms)} FROM ${depth.source.table}${joins}${where} ORDER BY ${orderBySql(terms)} OFFSET ${offset} LIMIT 1`,
    params.values,
  );
  return { cursor: encodeCursor(binding, keysOf(rows[0]!, terms)), row };
}

async function plan(sql: pg.Pool, depth: Depth, cursor: string): Promise<string> {
  const statement = buildPageStatements(depth.source, pageQuerySchema.parse({ pageSize: String(pageSize), after: cursor }), depth.serverConditions).page;
  const { rows } = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.text}`, statement.values);
  const lines = rows.map((each) => each['QUERY PLAN']);
  const seq = lines.filter((line) => /Seq Scan on (sales|listings|nfts)\b/.test(line));
  const scans = [...new Set(lines.flatMap((line) => /(?:Index Scan|Index Only Scan)(?: Backward)? using (\w+)/.exec(line)?.slice(1) ?? []))];
  return seq.length ? `SEQUENTIAL SCAN: ${seq.join('; ').trim()}` : `indexes ${scans.join(', ') || '(none)'}`;
}

export const cursorBench: BenchSection = async ({ stack, sql, concurrency, durationMs }) => {
  const postgresPid = stack.postgres?.pid;
  const measure = (url: string) => measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid });
  const firstPages = new Map<string, Figures>();
  const rows: Row[] = [];
  const plans: string[] = [];
  const row = (name: string, gateway: Figures, baseline: Figures) =>
    rows.push({ name, gateway, baseline, baselineName: `the first page of the same list (${pageSize} rows), measured in this run` });
  for (const { list, path } of [depths[0]!, depths[2]!]) {
    const first = await measure(`${stack.url}${path}?pageSize=${pageSize}`);
    firstPages.set(list, first);
    row(`${list}: first page`, first, first);
  }
  row('sales: offset page 200', await measure(`${stack.url}/transparency/sales?page=200&pageSize=${pageSize}`), firstPages.get('sales')!);
  for (const depth of depths) {
    const { cursor, row: at } = await cursorAt(sql, depth);
    const url = `${stack.url}${depth.path}?pageSize=${pageSize}&after=${cursor}`;
    const body = JSON.parse(await httpGet(url)) as { items: unknown[]; nextCursor?: string };
    const name = `${depth.list}: cursor at row ${at.toLocaleString('en')}`;
    if (depth.at === 'last' ? body.items.length !== 0 || body.nextCursor : body.items.length !== pageSize)
      throw new Error(`${name}: ${body.items.length} items`);
    plans.push(`  ${name.padEnd(40)} ${await plan(sql, depth, cursor)}`);
    row(name, await measure(url), firstPages.get(depth.list)!);
  }
  printTable('Cursor pages against the first page (HTTP through the local gateway; load generators in their own processes)', rows);
  console.log(`Plans of the cursor pages (EXPLAIN):\n${plans.join('\n')}`);

  if (process.env.BENCH_CURSOR_WALK === '0') return;
  const started = performance.now();
  const seen = new Set<string>();
  let items = 0;
  let after: string | undefined;
  let pages = 0;
  do {
    const body = JSON.parse(await httpGet(`${stack.url}/transparency/sales?pageSize=100${after ? `&after=${after}` : ''}`)) as {
      items: { tokenId: string; blockNumber: string; price: string; seller: string; buyer: string }[];
      nextCursor?: string;
    };
    for (const sale of body.items) seen.add(JSON.stringify(sale));
    items += body.items.length;
    after = body.nextCursor;
    pages++;
  } while (after);
  const seconds = (performance.now() - started) / 1000;
  const [{ total }] = (await sql.query<{ total: string }>('SELECT count(*)::text AS total FROM "indexer".sales')).rows as [{ total: string }];
  console.log(
    `A walk of every sale by cursor, 100 a page, one client: ${pages.toLocaleString('en')} pages, ${items.toLocaleString('en')} sales (${seen.size.toLocaleString('en')} distinct in every field) of ${Number(total).toLocaleString('en')} in ${seconds.toFixed(1)} s`,
  );
};
