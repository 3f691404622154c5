import { eventTypes } from '@hatchery/core/events/catalogue';
import { eventCursor } from '@hatchery/core/events/replay';
import { indexerTable, notificationChannel } from '@hatchery/core/indexer/names';
import type pg from 'pg';
import { loadAverage, type BenchSection } from './context';
import { appendBenchEvents, benchWallet, eventLogStarted } from './events';
import { httpGet, measureInChild, median, printTable, type Figures, type Row } from './measure';

type EventPage = { items: Array<{ position: number; type: string; entity: string }>; nextCursor: string; hasMore: boolean };

const pageSize = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fulfilment written to the indexer's tables as Ponder writes it, its NOTIFY naming the table, so the stack's
 * listener appends its `forge.fulfilled` to the log.
 */
async function fulfil(sql: pg.Pool, requestId: string, block: string): Promise<void> {
  const client = await sql.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO ${indexerTable('forge_requests')} (request_id, buyer, tier, status, token_id, edition_id, block_number, fulfilled_at_block)
       VALUES ($1::numeric, $2::text, 1, 'Fulfilled', $1::numeric, 1, $3::numeric, $3::numeric)`,
      [requestId, benchWallet(7), block],
    );
    await client.query('SELECT pg_notify($1, $2)', [notificationChannel(), JSON.stringify(['forge_requests'])]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * `BENCH_SECTIONS=replay`: GET /events over `BENCH_REPLAY_EVENTS` events
 * (100,000) appended to the log. Cursor pages deep in the log beside the
 * first page, with and without a type or wallet filter (HTTP through the
 * local gateway, load generators in their own processes); then one client
 * walks them all by cursor while the stack's listener appends fulfilments
 * that the section writes to the indexer's tables, and the walk must meet
 * every position once, with no gap, up to the log's last.
 */
export const replayBench: BenchSection = async ({ stack, sql, concurrency, durationMs }) => {
  await eventLogStarted(sql);
  const total = Number(process.env.BENCH_REPLAY_EVENTS ?? 100_000);
  const { first, last } = await appendBenchEvents(sql, total);
  // As autovacuum leaves a log written over time: otherwise the first reads set the new rows' hint bits and autovacuum's analyze runs during them.
  await sql.query('VACUUM (ANALYZE) hatchery.events');
  const measure = (url: string) => measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid: stack.postgres?.pid });
  const page = async (query: string) => JSON.parse(await httpGet(`${stack.url}/events?${query}`)) as EventPage;

  // The bench's events take the declared types in turn, from the position's remainder: a type's last full page starts this far before the end.
  const typeSpan = eventTypes.length * (pageSize + 1);
  const wallet = benchWallet(first % 1000);
  const cases: Array<{ name: string; query: string; baseline: string; full: boolean }> = [
    { name: 'first page', query: `after=${eventCursor(first - 1)}`, baseline: 'first page', full: true },
    { name: 'no cursor (the oldest kept)', query: '', baseline: 'first page', full: true },
    {
      name: `cursor at event ${Math.floor(total / 2).toLocaleString('en')}`,
      query: `after=${eventCursor(first - 1 + Math.floor(total / 2))}`,
      baseline: 'first page',
      full: true,
    },
    { name: `cursor at the last full page`, query: `after=${eventCursor(last - pageSize)}`, baseline: 'first page', full: true },
    {
      name: 'type=sale.completed: first page',
      query: `type=sale.completed&after=${eventCursor(first - 1)}`,
      baseline: 'type=sale.completed: first page',
      full: true,
    },
    {
      name: 'type=sale.completed: last full page',
      query: `type=sale.completed&after=${eventCursor(last - typeSpan)}`,
      baseline: 'type=sale.completed: first page',
      full: true,
    },
    { name: 'wallet: first page', query: `wallet=${wallet}&after=${eventCursor(first - 1)}`, baseline: 'wallet: first page', full: false },
    {
      name: `wallet: cursor at event ${Math.floor(total / 2).toLocaleString('en')}`,
      query: `wallet=${wallet}&after=${eventCursor(first - 1 + Math.floor(total / 2))}`,
      baseline: 'wallet: first page',
      full: false,
    },
  ];
  const figures = new Map<string, Figures>();
  const rows: Row[] = [];
  for (const each of cases) {
    const query = `pageSize=${pageSize}${each.query ? `&${each.query}` : ''}`;
    const body = await page(query);
    if (each.full ? body.items.length !== pageSize : body.items.length === 0) throw new Error(`${each.name}: ${body.items.length} events`);
    const load = loadAverage();
    const measured = await measure(`${stack.url}/events?${query}`);
    figures.set(each.name, measured);
    rows.push({
      name: `${each.name} (${body.items.length}; load ${load})`,
      gateway: measured,
      baseline: figures.get(each.baseline)!,
      baselineName: `the first page of the same filter, ${pageSize} a page, measured in this run`,
    });
  }
  printTable(`Replay: GET /events pages over ${total.toLocaleString('en')} events, cursor pages against the first page (events a page in brackets)`, rows);

  // The walk, while the listener appends what the indexer writes.
  const { rows: starts } = await sql.query<{ block: string; request: string }>(
    `SELECT greatest((SELECT final_block FROM hatchery.event_log), (SELECT coalesce(max(fulfilled_at_block), 0) FROM ${indexerTable('forge_requests')}))::text AS block,
       (SELECT coalesce(max(request_id), 0) + 4000000 FROM ${indexerTable('forge_requests')})::text AS request`,
  );
  let block = BigInt(starts[0]!.block);
  let request = BigInt(starts[0]!.request);
  const written: string[] = [];
  let writing = true;
  const writer = (async () => {
    while (writing) {
      const id = String(++request);
      await fulfil(sql, id, String(++block));
      written.push(id);
      await sleep(50);
    }
  })();

  const load = loadAverage();
  const started = performance.now();
  const positions: number[] = [];
  const fulfilled = new Map<string, number>();
  const fullPages: Array<{ after: string; ms: number }> = [];
  let after = eventCursor(first - 1);
  let pages = 0;
  for (;;) {
    const t0 = performance.now();
    const body = await page(`pageSize=${pageSize}&after=${after}`);
    const ms = performance.now() - t0;
    pages++;
    if (body.items.length === pageSize && body.items.at(-1)!.position <= last) fullPages.push({ after, ms });
    for (const event of body.items) {
      positions.push(event.position);
      if (event.type === 'forge.fulfilled' && event.position > last) fulfilled.set(event.entity, (fulfilled.get(event.entity) ?? 0) + 1);
    }
    after = body.nextCursor;
    if (body.hasMore) continue;
    if (writing && positions.at(-1)! >= last) {
      writing = false;
      await writer;
      await stack.listener?.idle();
      continue;
    }
    if (!writing) {
      const { rows: logged } = await sql.query<{ last: string }>('SELECT last_position::text AS last FROM hatchery.event_log');
      if (positions.at(-1) === Number(logged[0]!.last)) break;
    }
    await sleep(20);
  }
  const seconds = (performance.now() - started) / 1000;

  const gaps = positions.filter((position, index) => position !== first + index).length;
  const duplicates = positions.length - new Set(positions).size;
  const lost = written.filter((id) => fulfilled.get(id) !== 1).length;
  // The walk's first and last pages, read again in turns, so that the machine's drift over the walk weighs on both alike.
  const sample = 50;
  const firstPages = fullPages.slice(0, sample);
  const lastPages = fullPages.slice(-sample);
  const again = { first: [] as number[], last: [] as number[] };
  for (let i = 0; i < sample; i++)
    for (const [side, list] of [
      ['first', firstPages],
      ['last', lastPages],
    ] as const) {
      const t0 = performance.now();
      await page(`pageSize=${pageSize}&after=${list[i]!.after}`);
      again[side].push(performance.now() - t0);
    }
  const walkRatio = median(lastPages.map((each) => each.ms)) / median(firstPages.map((each) => each.ms));
  const firstMs = median(again.first);
  const lastMs = median(again.last);
  console.log(
    `\nReplay: one client walks the log by cursor from the first of the ${total.toLocaleString('en')} events, ${pageSize} a page, while the listener appends fulfilments (load ${load})`,
  );
  console.log(
    `${pages.toLocaleString('en')} pages, ${positions.length.toLocaleString('en')} events in ${seconds.toFixed(1)} s; ${written.length} fulfilments written during the walk, ${written.length - lost} met once; positions out of place or missing ${gaps}, duplicates ${duplicates}`,
  );
  console.log(
    `the first ${sample} full pages and the last ${sample}, read again in turns (load ${loadAverage()}): medians ${firstMs.toFixed(2)} ms and ${lastMs.toFixed(2)} ms, ratio ${(lastMs / firstMs).toFixed(2)} (in the walk itself ${walkRatio.toFixed(2)})`,
  );
  console.log('(goals: no gap, no duplicate, every fulfilment met once; the last pages’ median at most 1.2 times the first pages’)');
  if (gaps || duplicates || lost)
    throw new Error(`the walk by cursor missed or repeated events: ${gaps} out of place, ${duplicates} duplicated, ${lost} fulfilments not met once`);
};
