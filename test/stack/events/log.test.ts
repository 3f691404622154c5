import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { migrate } from '@hatchery/core/migrate';
import { appendDetectedEvents } from '@hatchery/core/events/log-writer';
import { readEvents, positionOf, type EventQuery } from '@hatchery/core/events/replay';
import { deleteExpiredEvents } from '@hatchery/core/events/retention';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { advanceCheckpoint, createPonderCheckpoint, ponderCheckpoint } from '@hatchery/local/demo-data';

const alice = '0x00000000000000000000000000000000000000a1';
const bob = '0x00000000000000000000000000000000000000b0';

let database: EmbeddedDatabase;
let dataDir: string;
let session: pg.Client;
let sql: pg.Pool;

const read = (query: Partial<EventQuery>, covered?: string) => readEvents(sql, { finality: 'latest', limit: 100, ...query }, covered);
const types = async (query: Partial<EventQuery> = {}) => (await read(query)).items.map((event) => `${event.type} ${event.entity}@${event.blockNumber}`);
const pass = () => appendDetectedEvents(session);
/** The checkpoint at `latest`, with `finalized` behind it (Ponder's safe is between; here, the finalized). */
async function checkpoint(latest: bigint, finalized: bigint) {
  await advanceCheckpoint(sql, 0n);
  await sql.query('UPDATE indexer._ponder_checkpoint SET latest_checkpoint = $1, finalized_checkpoint = $2, safe_checkpoint = $2', [
    ponderCheckpoint(latest),
    ponderCheckpoint(finalized),
  ]);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-events-'));
  database = await startEmbeddedPostgres({ dataDir, persistent: false, templateDir: inject('postgresTemplateDir') });
  await migrate(database.url);
  sql = new pg.Pool({ connectionString: database.url, max: 3 });
  // The server's goodbye to an idle client when it stops is no failure of the test's.
  sql.on('error', () => undefined);
  await sql.query(await readFile(new URL('../../../packages/core/src/indexer/schema.sql', import.meta.url), 'utf8'));
  await createPonderCheckpoint(sql);
  session = new pg.Client({ connectionString: database.url });
  await session.connect();
});

afterAll(async () => {
  await session?.end();
  await sql?.end();
  await database?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  await sql.query(
    `TRUNCATE hatchery.events, hatchery.event_log, hatchery.event_nft_owners, indexer.forge_requests, indexer.sales, indexer.listings, indexer.nfts`,
  );
  await sql.query(`INSERT INTO indexer.forge_requests VALUES (1, $1, 1, 'Fulfilled', 11, 2, 5, 10)`, [alice]);
  await sql.query(`INSERT INTO indexer.nfts VALUES (11, $1, 2, 0, 'Old', false, false)`, [alice]);
  await checkpoint(10n, 10n);
});

describe('the event log', () => {
  it('starts at the indexer’s newest block: what came before is history, and the owners then are its baseline', async () => {
    expect(await pass()).toMatchObject({ started: true, appended: 0, lastPosition: 0, finalBlock: '10' });
    expect(await pass()).toMatchObject({ started: false, appended: 0 });
    expect(await types()).toEqual([]);
  });

  it('appends each new fulfilment, sale, listing and transfer once, in block order, with positions that have no holes', async () => {
    await pass();
    await sql.query(`INSERT INTO indexer.forge_requests VALUES (2, $1, 3, 'Fulfilled', 12, 2, 11, 12)`, [bob]);
    await sql.query(`INSERT INTO indexer.nfts VALUES (12, $1, 2, 0, 'New', false, false)`, [bob]);
    await sql.query(`INSERT INTO indexer.listings VALUES (11, $1, 500, 'Active', 2, 11, 11, '0xa')`, [alice]);
    await checkpoint(12n, 10n);
    expect(await pass()).toMatchObject({ appended: 3, reverted: 0, lastPosition: 3 });
    // A second pass over the same rows, as after a restart, writes nothing.
    expect(await pass()).toMatchObject({ appended: 0, lastPosition: 3 });
    await sql.query(`UPDATE indexer.listings SET status = 'Sold', updated_at_block = 13 WHERE token_id = 11`);
    await sql.query(`INSERT INTO indexer.sales VALUES ('0xs1', 11, $1, $2, 500, 10, 5, 13)`, [alice, bob]);
    await sql.query(`UPDATE indexer.nfts SET owner = $1 WHERE token_id = 11`, [bob]);
    await checkpoint(13n, 10n);
    expect(await pass()).toMatchObject({ appended: 3, lastPosition: 6 });
    expect(await types()).toEqual([
      'listing.opened 11@11@11',
      'nft.transferred 12@12',
      'forge.fulfilled 2@12',
      'sale.completed 0xs1@13',
      'listing.closed 11@11@13',
      'nft.transferred 11@13',
    ]);
    const { items } = await read({});
    expect(items.map((event) => event.position)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(items[2]).toMatchObject({
      id: 'evt_3',
      chainId: 31337,
      wallets: [bob],
      payload: { requestId: '2', buyer: bob, tier: 3, tokenId: '12', editionId: '2' },
    });
    expect(items[5]?.payload).toEqual({ tokenId: '11', from: alice, to: bob });
    expect((await read({ wallet: alice.toUpperCase().replace('0X', '0x') })).items.map((event) => event.position)).toEqual([1, 4, 5, 6]);
    expect((await read({ types: ['sale.completed'] })).items.map((event) => event.position)).toEqual([4]);
  });

  it('retracts an event whose rows a reorg removed, naming it, and never shows either at a finality that does not cover it', async () => {
    await pass();
    await sql.query(`INSERT INTO indexer.forge_requests VALUES (2, $1, 3, 'Fulfilled', 12, 2, 11, 12)`, [bob]);
    await checkpoint(12n, 10n);
    await pass();
    await sql.query(`UPDATE indexer.forge_requests SET status = 'Requested', fulfilled_at_block = NULL, token_id = NULL WHERE request_id = 2`);
    await checkpoint(12n, 10n);
    expect(await pass()).toMatchObject({ appended: 0, reverted: 1, lastPosition: 2 });
    const { items } = await read({ types: ['forge.fulfilled'] });
    expect(items.map((event) => [event.type, event.reverts?.id])).toEqual([
      ['forge.fulfilled', undefined],
      ['forge.fulfilled.reverted', 'evt_1'],
    ]);
    expect((await read({ finality: 'finalized' }, '12')).items).toEqual([]);
  });

  it('at a finality, stops before the first event its block does not cover, and reads on from there once it does', async () => {
    await pass();
    await sql.query(`INSERT INTO indexer.sales VALUES ('0xs1', 11, $1, $2, 500, 10, 5, 12), ('0xs2', 11, $2, $1, 500, 10, 5, 14)`, [alice, bob]);
    await checkpoint(14n, 14n);
    await pass();
    const first = await read({ finality: 'finalized' }, '12');
    expect(first.items.map((event) => event.entity)).toEqual(['0xs1']);
    expect((await read({ finality: 'finalized', after: positionOf(first.nextCursor) }, '13')).items).toEqual([]);
    expect((await read({ finality: 'finalized', after: positionOf(first.nextCursor) }, '14')).items.map((event) => event.entity)).toEqual(['0xs2']);
    // Unknown finality covers nothing.
    expect((await read({ finality: 'safe' }, undefined)).items).toEqual([]);
  });

  it('at a finality, covers no event above the log’s final block, though the indexer’s block has passed it', async () => {
    await pass();
    await sql.query(`INSERT INTO indexer.sales VALUES ('0xs1', 11, $1, $2, 500, 10, 5, 12)`, [alice, bob]);
    await checkpoint(12n, 10n);
    await pass();
    // A reorg's revert takes the sale, then the indexer finalizes past its block, before the next pass compares.
    await sql.query(`DELETE FROM indexer.sales WHERE id = '0xs1'`);
    await checkpoint(13n, 12n);
    expect((await read({ finality: 'finalized' }, '12')).items).toEqual([]);
    expect(await pass()).toMatchObject({ reverted: 1, finalBlock: '12' });
    expect((await read({ finality: 'finalized' }, '12')).items).toEqual([]);
    expect(await types()).toEqual(['sale.completed 0xs1@12', 'sale.completed.reverted 0xs1@12']);
  });

  it('pages by cursor with no gap and no duplicate, and answers 410 naming the oldest kept once retention took a cursor’s events', async () => {
    await pass();
    for (let block = 11; block <= 30; block++)
      await sql.query(`INSERT INTO indexer.sales VALUES ($1, 11, $2, $3, 1, 0, 0, $4)`, [`0x${block}`, alice, bob, block]);
    await checkpoint(30n, 30n);
    await pass();
    const seen: number[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await read({ after, limit: 7 });
      seen.push(...page.items.map((event) => event.position));
      after = positionOf(page.nextCursor);
      if (!page.hasMore) break;
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    await sql.query(`UPDATE hatchery.events SET created_at = now() - interval '40 days' WHERE position <= 5`);
    expect(await deleteExpiredEvents(sql, new Date(Date.now() - 30 * 86_400_000))).toBe(5);
    await expect(read({ after: 2 })).rejects.toMatchObject({ kind: 'gone', extensions: { oldestPosition: '6' } });
    expect((await read({ after: 5 })).items[0]?.position).toBe(6);
    expect((await read({})).items[0]?.position).toBe(6);
    await expect(read({ after: 999 })).rejects.toMatchObject({ kind: 'validation' });
  });

  it('keeps an open event from retention, and retracts an owner change a reorg undid', async () => {
    await pass();
    await sql.query(`UPDATE indexer.nfts SET owner = $1 WHERE token_id = 11`, [bob]);
    await checkpoint(12n, 10n);
    await pass();
    await sql.query(`UPDATE hatchery.events SET created_at = now() - interval '40 days'`);
    expect(await deleteExpiredEvents(sql, new Date(Date.now() - 30 * 86_400_000))).toBe(0);
    await sql.query(`UPDATE indexer.nfts SET owner = $1 WHERE token_id = 11`, [alice]);
    expect(await pass()).toMatchObject({ appended: 0, reverted: 1 });
    expect(await types()).toEqual(['nft.transferred 11@12', 'nft.transferred.reverted 11@12']);
  });

  it('compares owners in the pass that makes a transfer final, asked to or not: one a reorg undid is retracted, never final', async () => {
    await pass();
    await sql.query(`UPDATE indexer.nfts SET owner = $1 WHERE token_id = 11`, [bob]);
    await checkpoint(12n, 10n);
    await pass();
    // A reorg's revert hands the NFT back and notifies nothing: the passes after it are not asked to compare owners.
    await sql.query(`UPDATE indexer.nfts SET owner = $1 WHERE token_id = 11`, [alice]);
    await checkpoint(13n, 10n);
    expect(await appendDetectedEvents(session, { owners: false })).toMatchObject({ reverted: 0, finalBlock: '10' });
    await checkpoint(14n, 12n);
    expect(await appendDetectedEvents(session, { owners: false })).toMatchObject({ reverted: 1, finalBlock: '12' });
    expect(await types()).toEqual(['nft.transferred 11@12', 'nft.transferred.reverted 11@12']);
    expect((await read({ finality: 'finalized' }, '14')).items).toEqual([]);
  });

  it('lets one writer pass at a time: a second waits on the first’s lock, then finds nothing new', async () => {
    await pass();
    await sql.query(`INSERT INTO indexer.sales VALUES ('0xs1', 11, $1, $2, 500, 10, 5, 12)`, [alice, bob]);
    await checkpoint(12n, 10n);
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      const outcomes = await Promise.allSettled([pass(), appendDetectedEvents(other)]);
      const appended = outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.appended : 'failed'));
      expect(appended.filter((count) => count === 1)).toHaveLength(1);
      expect((await read({})).items).toHaveLength(1);
    } finally {
      await other.end();
    }
  });
});
