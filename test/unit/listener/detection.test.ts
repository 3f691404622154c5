import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Queryable } from '@hatchery/core/db';
import type { Fulfilment, Listings } from '@hatchery/core/realtime/changes';
import { changeDetection } from '@hatchery/listener/detection';
import type { DetectionState, StateStore } from '@hatchery/listener/state';

/**
 * Change detection over the indexer's two tables as the listener reads them,
 * held in memory: `listings` answers its snapshot (or is missing, 42P01), and
 * `forge_requests` its fulfilled rows, the newest block's without a cursor or
 * those from the cursor's block on, in block order, as the SQL asks.
 */
function indexer() {
  const tables: { listings?: Listings; fulfilled?: Fulfilment[] } = { listings: { count: 0, maxBlock: '0' }, fulfilled: [] };
  const missing = () => Object.assign(new Error('relation does not exist'), { code: '42P01' });
  const db = {
    async query(text: string, values?: unknown[]) {
      if (/\.listings\b/.test(text)) {
        if (!tables.listings) throw missing();
        return { rows: [tables.listings] };
      }
      if (!tables.fulfilled) throw missing();
      const byBlock = [...tables.fulfilled].sort((a, b) => Number(BigInt(a.block) - BigInt(b.block)) || a.requestId.localeCompare(b.requestId));
      if (!values) {
        const newest = byBlock.at(-1)?.block;
        return { rows: byBlock.filter((row) => row.block === newest) };
      }
      return { rows: byBlock.filter((row) => BigInt(row.block) >= BigInt(values[0] as string)) };
    },
  } as unknown as Queryable;
  return { db, tables };
}

const buyer = `0x${'b1'.repeat(20)}`;
const fulfilled = (requestId: string, block: string): Fulfilment => ({ requestId, buyer, tokenId: `1${requestId}`, editionId: '2', block });

/** A state store in memory that keeps every save; `failing` makes its loads and saves fail. */
function memoryStore(initial?: DetectionState) {
  let saved = initial;
  const saves: DetectionState[] = [];
  const store: StateStore & { failing: boolean } = {
    failing: false,
    async load() {
      if (store.failing) throw new Error('table unavailable');
      return saved;
    },
    async save(state) {
      if (store.failing) throw new Error('table unavailable');
      saves.push(state);
      saved = state;
    },
  };
  return { store, saves, saved: () => saved };
}

const silent = () => pino({ level: 'silent' });
const minutes = (count: number) => count * 60_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
});
afterEach(() => vi.useRealTimers());

describe('fulfilments', () => {
  it('start at the newest fulfilment on a first term: what came before is history', async () => {
    const { db, tables } = indexer();
    tables.fulfilled = [fulfilled('1', '9'), fulfilled('2', '10')];
    const detection = changeDetection(memoryStore().store, silent());
    await detection.begin();
    const first = await detection.fulfilments(db);
    expect(first.fresh).toEqual([]);
    first.seen();
    tables.fulfilled.push(fulfilled('3', '10'), fulfilled('4', '11'));
    expect((await detection.fulfilments(db)).fresh.map((row) => row.requestId)).toEqual(['3', '4']);
  });

  it('are handed back until the caller says they were sent, then never again', async () => {
    const { db, tables } = indexer();
    const detection = changeDetection(memoryStore().store, silent());
    await detection.begin();
    (await detection.fulfilments(db)).seen();
    tables.fulfilled!.push(fulfilled('5', '12'));
    const unsent = await detection.fulfilments(db);
    expect(unsent.fresh.map((row) => row.requestId)).toEqual(['5']);
    // Not sent (the posts failed, or the term ended): the next read hands it back.
    const again = await detection.fulfilments(db);
    expect(again.fresh.map((row) => row.requestId)).toEqual(['5']);
    again.seen();
    expect((await detection.fulfilments(db)).fresh).toEqual([]);
  });

  it('are none while the table is missing, and every one it then comes to hold is new', async () => {
    const { db, tables } = indexer();
    tables.fulfilled = undefined;
    const detection = changeDetection(memoryStore().store, silent());
    await detection.begin();
    const read = await detection.fulfilments(db);
    expect(read.fresh).toEqual([]);
    read.seen();
    tables.fulfilled = [fulfilled('1', '3')];
    expect((await detection.fulfilments(db)).fresh.map((row) => row.requestId)).toEqual(['1']);
  });

  it('back-filled by the indexer, more than a thousand at once, are not sent, and the cursor moves past them', async () => {
    const { db, tables } = indexer();
    const lines: { msg: string; skipped?: number }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const detection = changeDetection(memoryStore().store, log);
    await detection.begin();
    (await detection.fulfilments(db)).seen();
    tables.fulfilled = Array.from({ length: 1_001 }, (_, i) => fulfilled(String(1000 + i), String(20 + Math.floor(i / 100))));
    const backfill = await detection.fulfilments(db);
    expect(backfill.fresh).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ msg: 'fulfilments back-filled by the indexer are not sent', skipped: 1_001 })]);
    backfill.seen();
    tables.fulfilled.push(fulfilled('9999', '40'));
    const after = await detection.fulfilments(db);
    expect(after.fresh.map((row) => row.requestId)).toEqual(['9999']);
    after.seen();

    // A thousand is still events someone waits for.
    tables.fulfilled.push(...Array.from({ length: 1_000 }, (_, i) => fulfilled(String(20_000 + i), '41')));
    expect((await detection.fulfilments(db)).fresh).toHaveLength(1_000);
  });
});

describe('the listings', () => {
  it('are sent on the first read of every term, whatever was sent before, so clients resync; then only when they change', async () => {
    const { db, tables } = indexer();
    tables.listings = { count: 2, maxBlock: '7' };
    const detection = changeDetection(memoryStore().store, silent());
    await detection.begin();
    expect(await detection.market(db)).toEqual({ count: 2, maxBlock: '7' });
    expect(await detection.market(db)).toBeUndefined();
    tables.listings = { count: 2, maxBlock: '8' };
    expect(await detection.market(db)).toEqual({ count: 2, maxBlock: '8' });
    expect(await detection.market(db)).toBeUndefined();
    // A new term (a takeover, a reconnection): the same snapshot goes out again.
    await detection.begin();
    expect(await detection.market(db)).toEqual({ count: 2, maxBlock: '8' });
  });

  it('send nothing while the table is missing, and the snapshot once it appears', async () => {
    const { db, tables } = indexer();
    tables.listings = undefined;
    const detection = changeDetection(memoryStore().store, silent());
    await detection.begin();
    expect(await detection.market(db)).toBeUndefined();
    expect(await detection.market(db)).toBeUndefined();
    tables.listings = { count: 1, maxBlock: '3' };
    expect(await detection.market(db)).toEqual({ count: 1, maxBlock: '3' });
  });
});

describe('the detection state', () => {
  it('is saved when it changes, and carried on by the next leader: what was committed between the two is reported', async () => {
    const { db, tables } = indexer();
    tables.fulfilled = [fulfilled('1', '10')];
    tables.listings = { count: 1, maxBlock: '10' };
    const shared = memoryStore();
    const leader = changeDetection(shared.store, silent());
    await leader.begin();
    (await leader.fulfilments(db)).seen();
    await leader.market(db);
    await leader.idle();
    expect(shared.saved()).toEqual({ cursor: { block: '10', seen: ['1'] }, snapshot: { count: 1, maxBlock: '10' }, readAt: Date.now() });

    // The leader is gone; a fulfilment is committed before the next one takes over.
    tables.fulfilled.push(fulfilled('2', '11'));
    vi.setSystemTime(Date.now() + 30_000);
    const next = changeDetection(shared.store, silent());
    await next.begin();
    expect((await next.fulfilments(db)).fresh.map((row) => row.requestId)).toEqual(['2']);
  });

  it('is not carried on once too old (ten minutes): the clients have given up on it, and the newest fulfilment is the start', async () => {
    const { db, tables } = indexer();
    const stale = { cursor: { block: '10', seen: ['1'] }, snapshot: { count: 1, maxBlock: '10' }, readAt: Date.now() - minutes(10) - 1 };
    tables.fulfilled = [fulfilled('1', '10'), fulfilled('2', '11'), fulfilled('3', '12')];
    const detection = changeDetection(memoryStore(stale).store, silent());
    await detection.begin();
    expect((await detection.fulfilments(db)).fresh).toEqual([]);

    const fresh = { ...stale, readAt: Date.now() - minutes(10) };
    const resumed = changeDetection(memoryStore(fresh).store, silent());
    await resumed.begin();
    expect((await resumed.fulfilments(db)).fresh.map((row) => row.requestId)).toEqual(['2', '3']);
  });

  it('is kept by this process too: a new term resumes what it remembers when the store has nothing newer', async () => {
    const { db, tables } = indexer();
    const { store } = memoryStore();
    const detection = changeDetection(store, silent());
    await detection.begin();
    (await detection.fulfilments(db)).seen();
    await detection.idle();
    // The store cannot be read at the next term's start: the state this process remembers carries on.
    store.failing = true;
    tables.fulfilled!.push(fulfilled('7', '30'));
    await detection.begin();
    expect((await detection.fulfilments(db)).fresh.map((row) => row.requestId)).toEqual(['7']);
  });

  it('is saved again when unchanged only as a heartbeat, every two and a half minutes, so a takeover finds it fresh', async () => {
    const { db } = indexer();
    const { store, saves } = memoryStore();
    const detection = changeDetection(store, silent());
    await detection.begin();
    await detection.market(db);
    await detection.idle();
    expect(saves).toHaveLength(1);
    vi.setSystemTime(Date.now() + minutes(2.5) - 1);
    await detection.market(db);
    await detection.idle();
    expect(saves).toHaveLength(1);
    vi.setSystemTime(Date.now() + 1);
    await detection.market(db);
    await detection.idle();
    expect(saves).toHaveLength(2);
    expect(saves[1]!.readAt).toBe(Date.now());
  });

  it('that cannot be loaded or saved is logged, never failing the reads', async () => {
    const { db, tables } = indexer();
    const lines: { msg: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const { store } = memoryStore();
    store.failing = true;
    const detection = changeDetection(store, log);
    await detection.begin();
    tables.listings = { count: 4, maxBlock: '5' };
    expect(await detection.market(db)).toEqual({ count: 4, maxBlock: '5' });
    await detection.idle();
    expect(lines.map((line) => line.msg)).toEqual(['listener state could not be loaded', 'listener state could not be saved']);
  });
});
