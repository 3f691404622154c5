import { describe, expect, it } from 'vitest';
import { cachedFreshness, decodeCheckpoint, freshnessHeaders, indexedBlockHeader } from '@hatchery/core/indexer/freshness';
import { indexerSchema, indexerTable, notificationChannel } from '@hatchery/core/indexer/names';
import { tablesToRead } from '@hatchery/core/realtime/changes';
import { parseIndexedBlock } from '../../../packages/client/src/index';

describe('a notification’s payload', () => {
  it('reads only the tables Ponder’s list names, per-chain partitions included', () => {
    const none = { listings: false, forgeRequests: false, nfts: false, summary: false };
    expect(tablesToRead('[]')).toEqual(none);
    expect(tablesToRead('["referral_links","staking_pairs"]')).toEqual(none);
    expect(tablesToRead('["listings","referral_links"]')).toEqual({ ...none, listings: true });
    expect(tablesToRead('["forge_requests"]')).toEqual({ ...none, forgeRequests: true });
    expect(tablesToRead('["forge_requests_8453","listings_1"]')).toEqual({ ...none, listings: true, forgeRequests: true });
    expect(tablesToRead('["nfts_8453"]')).toEqual({ ...none, nfts: true, summary: true });
    // Another table whose name only starts like ours is not ours.
    expect(tablesToRead('["listings_archive","forge_requests_8453x","listingsx","sales_archive","nfts2"]')).toEqual(none);
  });

  it('sums the summary again when a table it sums is named, and only then', () => {
    for (const table of ['sales', 'nfts', 'editions', 'token_transfers', 'sales_8453']) {
      expect(tablesToRead(JSON.stringify(['referral_links', table])), table).toEqual({
        listings: false,
        forgeRequests: false,
        nfts: table === 'nfts',
        summary: true,
      });
    }
    expect(tablesToRead('["listings","nfts","sales"]')).toEqual({ listings: true, forgeRequests: false, nfts: true, summary: true });
  });

  it('reads everything for any other payload: a plain NOTIFY, simulate’s, another writer’s', () => {
    for (const payload of [undefined, '', 'listings', 'forge_requests', '{"tables":[]}', '[1,2]', '["listings",3]', 'null', '"listings"', '[']) {
      expect(tablesToRead(payload), String(payload)).toEqual({ listings: true, forgeRequests: true, nfts: true, summary: true });
    }
  });
});

describe('Ponder’s checkpoint', () => {
  it('gives the block’s timestamp, chain and number from their fixed digits', () => {
    // encodeCheckpoint's layout: 10 digits of timestamp, 16 of chain id, 16 of block number, 16 + 1 + 16 of the event's place.
    const checkpoint = `1764000000${'8453'.padStart(16, '0')}${'31415926'.padStart(16, '0')}${'7'.padStart(16, '0')}5${'3'.padStart(16, '0')}`;
    expect(checkpoint).toHaveLength(75);
    expect(decodeCheckpoint(checkpoint)).toEqual({ timestamp: 1_764_000_000, chainId: 8453, block: '31415926' });
    expect(decodeCheckpoint('not a checkpoint')).toBeUndefined();
    expect(decodeCheckpoint('')).toBeUndefined();
  });

  it('is written into X-Indexed-Block per chain, and read back by the client', () => {
    const chain = (chainId: number, block: string) => ({
      chainId,
      block,
      safeBlock: block,
      finalizedBlock: block,
      blockTimestamp: '2026-11-25T00:00:00.000Z',
      lagSeconds: 1,
      ready: true,
    });
    expect(freshnessHeaders('unknown')[indexedBlockHeader]).toBeUndefined();
    const header = freshnessHeaders({ chains: [chain(1, '20000000'), chain(8453, '18446744073709551617')] })[indexedBlockHeader]!;
    expect(header).toBe('1=20000000, 8453=18446744073709551617');
    expect(parseIndexedBlock(header)).toEqual({ 1: 20000000n, 8453: 18446744073709551617n });
    expect(parseIndexedBlock('garbage, 5=6')).toEqual({ 5: 6n });
  });

  it('is read at most once per interval per instance, and a failed read is not kept', async () => {
    let now = 0;
    let reads = 0;
    let fail = false;
    const read = async () => {
      reads++;
      if (fail) throw new Error('down');
      return 'unknown' as const;
    };
    const freshness = cachedFreshness(read, 1000, () => now);
    expect(freshness.settled()).toBeUndefined();
    const first = freshness();
    expect(freshness.settled(), 'not before the read has come').toBeUndefined();
    await first;
    expect(freshness.settled()).toBe('unknown');
    await freshness();
    expect(reads).toBe(1);
    now = 1000;
    expect(freshness.settled(), 'not once it is stale').toBeUndefined();
    fail = true;
    await expect(freshness()).rejects.toThrow('down');
    expect(freshness.settled()).toBeUndefined();
    fail = false;
    await freshness();
    expect(reads).toBe(3);
    expect(freshness.settled()).toBe('unknown');
  });
});

describe('INDEXER_SCHEMA', () => {
  it('names the schema every read uses and the channel, and refuses what is no plain lowercase name', () => {
    const before = process.env.INDEXER_SCHEMA;
    try {
      delete process.env.INDEXER_SCHEMA;
      expect([indexerSchema(), indexerTable('listings'), notificationChannel()]).toEqual(['indexer', '"indexer".listings', 'indexer_live_query']);
      process.env.INDEXER_SCHEMA = 'game_views';
      expect([indexerTable('sales'), notificationChannel()]).toEqual(['"game_views".sales', 'game_views_live_query']);
      for (const bad of ['Indexer', 'a"b', 'x; DROP TABLE y', '1abc', 'a'.repeat(53)]) {
        process.env.INDEXER_SCHEMA = bad;
        expect(() => indexerSchema(), bad).toThrow();
      }
    } finally {
      if (before === undefined) delete process.env.INDEXER_SCHEMA;
      else process.env.INDEXER_SCHEMA = before;
    }
  });
});
