import type { Queryable } from '@hatchery/core/db';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { indexerSchema, indexerTable } from '@hatchery/core/indexer/names';

export interface DemoSize {
  editions: number;
  nfts: number;
  owners: number;
  listings: number;
  sales: number;
  stakingPairs: number;
  forgeRequests: number;
  transfers: number;
  referrers: number;
}

export const demoSizes = {
  /** What `npm start` serves: small enough to load in about a second. */
  demo: { editions: 40, nfts: 5_000, owners: 50, listings: 1_000, sales: 2_000, stakingPairs: 600, forgeRequests: 800, transfers: 2_000, referrers: 10 },
  /** What `npm run bench` measures against (docs/benchmarks.md). */
  bench: {
    editions: 500,
    nfts: 1_000_000,
    owners: 10_000,
    listings: 200_000,
    sales: 1_000_000,
    stakingPairs: 100_000,
    forgeRequests: 200_000,
    transfers: 200_000,
    referrers: 1_000,
  },
} as const satisfies Record<string, DemoSize>;

/**
 * The demo wallet `n` (1-based): `0x` then n in hex, zero-padded to 40
 * characters, so the docs' examples and tests can name wallets without a table.
 */
export const demoAddress = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

/** The SQL twin of demoAddress. */
const address = (n: string) => `('0x' || lpad(to_hex(${n}), 40, '0'))`;
/** Above 2^64, so big-integer handling is exercised everywhere values flow. */
const huge = `18446744073709551616::numeric`;
const wei = (n: string) => `(${n} * 1000000000000000::numeric)`;

/** The listings (by their `i`) whose token has no NFT row: one in a hundred, mid-way through each hundred. */
const listingWithoutNft = 'i % 100 = 50';

const indexerTables = [
  'listings',
  'nfts',
  'editions',
  'staking_pairs',
  'forge_requests',
  'sales',
  'token_transfers',
  'referral_registrations',
  'referral_links',
  'referral_bnb_accruals',
  'referral_bnb_claims',
];

/**
 * Fills the indexer schema with deterministic demo data: every status of
 * every table, burned and staked NFTs, listings whose NFT row is missing,
 * ties on sort keys, and values above 2^64. Generated inside PostgreSQL so a
 * million rows take seconds.
 */
export async function loadDemoData(client: Queryable, size: DemoSize): Promise<void> {
  await createIndexerSchema(client);
  const s = size;
  const everyTable = indexerTables.map(indexerTable).join(', ');
  const statements = [
    `TRUNCATE ${everyTable}`,
    `INSERT INTO ${indexerTable('editions')}
     SELECT i, 'Edition ' || i, 'ipfs://hatchery/editions/' || i || '.png', (i * 37) % 100, (i * 53) % 100, (i * 71) % 100, i % 5,
            CASE WHEN i % 10 = 0 THEN ${huge} + i ELSE 1000 + i END, (i * 13) % 1000, 1000000 + i, 2000000 + i,
            CASE WHEN i % 4 = 0 THEN ${huge} * i ELSE ${wei('i')} END, i % 3, i % 3 <> 0
     FROM generate_series(1::bigint, ${s.editions}) AS i`,
    `INSERT INTO ${indexerTable('nfts')}
     SELECT CASE WHEN i % 1000 = 0 THEN ${huge} + i ELSE i END, ${address(`1 + (i * 7919) % ${s.owners}`)}, 1 + i % ${s.editions},
            i % 2, 'Hatchling #' || i, i % 10 = 0, i % 25 = 0
     FROM generate_series(1::bigint, ${s.nfts}) AS i`,
    // Listing i sells NFT i (above 2^64 for every thousandth, as the NFTs have it). One listing in a hundred names a token
    // with no NFT row (the indexer has not seen its mint yet), so the left join has nothing to add; the exception, as on a
    // live chain, and never among the newest, which a list shows first.
    `INSERT INTO ${indexerTable('listings')}
     SELECT CASE WHEN ${listingWithoutNft} THEN ${s.nfts} + i WHEN i % 1000 = 0 THEN ${huge} + i ELSE i END, ${address(`1 + (i * 7919) % ${s.owners}`)},
            CASE WHEN i % 7 = 0 THEN ${huge} * 5 + i ELSE ${wei(`(1 + i % 1000)`)} END,
            CASE WHEN i % 10 < 7 THEN 'Active' WHEN i % 10 = 8 THEN 'Sold' ELSE 'Cancelled' END,
            CASE WHEN ${listingWithoutNft} THEN NULL ELSE 1 + i % ${s.editions} END,
            1000000 + i / 3, 1000000 + i / 3 + i % 5, '0x' || md5('listing' || i) || md5('tx' || i)
     FROM generate_series(1::bigint, ${s.listings}) AS i`,
    `INSERT INTO ${indexerTable('staking_pairs')}
     SELECT i, ${address(`1 + (i * 31) % ${s.owners}`)}, 2 * i, 2 * i + 1, i % 2 = 0, 1700000000 + i / 4, 1700000000 + i / 4 + i % 100,
            CASE WHEN i % 3 = 0 THEN 'Unstaked' ELSE 'Staked' END
     FROM generate_series(1::bigint, ${s.stakingPairs}) AS i`,
    `INSERT INTO ${indexerTable('forge_requests')}
     SELECT CASE WHEN i % 500 = 0 THEN ${huge} + i ELSE i END, ${address(`1 + (i * 17) % ${s.owners}`)}, 1 + i % 3,
            CASE i % 4 WHEN 0 THEN 'Requested' WHEN 3 THEN 'Cancelled' ELSE 'Fulfilled' END,
            CASE WHEN i % 4 IN (1, 2) THEN ${s.nfts} * 2 + i END, CASE WHEN i % 4 IN (1, 2) THEN 1 + i % ${s.editions} END,
            2000000 + i, CASE WHEN i % 4 IN (1, 2) THEN 2000000 + i + 2 END
     FROM generate_series(1::bigint, ${s.forgeRequests}) AS i`,
    `INSERT INTO ${indexerTable('sales')}
     SELECT 'sale-' || i, 1 + i % ${s.nfts}, ${address(`1 + (i * 7919) % ${s.owners}`)}, ${address(`1 + (i * 104729) % ${s.owners}`)},
            p.price, p.price / 40, p.price / 20, 1000000 + i / 2
     FROM generate_series(1::bigint, ${s.sales}) AS i,
          LATERAL (SELECT CASE WHEN i % 11 = 0 THEN ${huge} * 3 + i ELSE ${wei(`(1 + i % 500)`)} END AS price) AS p`,
    `INSERT INTO ${indexerTable('token_transfers')}
     SELECT 'transfer-' || i, ${address(`1 + i % ${s.owners}`)}, ${address(`1 + (i * 13) % ${s.owners}`)},
            CASE WHEN i % 9 = 0 THEN ${huge} + i ELSE ${wei('i')} END, 1000000 + i
     FROM generate_series(1::bigint, ${s.transfers}) AS i`,
    `INSERT INTO ${indexerTable('referral_registrations')}
     SELECT ${address('i')}, 100000 + i, 900000 + i FROM generate_series(1::bigint, ${s.referrers}) AS i`,
    `INSERT INTO ${indexerTable('referral_links')}
     SELECT ${address('i')}, ${address(`1 + i % ${s.referrers}`)}, 950000 + i FROM generate_series(${s.referrers + 1}::bigint, ${s.owners}) AS i`,
    `INSERT INTO ${indexerTable('referral_bnb_accruals')}
     SELECT 'accrual-' || i, ${address(`1 + i % ${s.referrers}`)}, ${address(`${s.referrers + 1} + i % greatest(1, ${s.owners - s.referrers})`)},
            CASE WHEN i % 5 = 0 THEN ${huge} + i ELSE ${wei('i')} END, 960000 + i
     FROM generate_series(1::bigint, ${s.referrers * 8}) AS i`,
    `INSERT INTO ${indexerTable('referral_bnb_claims')}
     SELECT 'claim-' || i, ${address(`1 + i % ${s.referrers}`)}, ${wei('i')}, 970000 + i
     FROM generate_series(1::bigint, ${s.referrers * 2}) AS i`,
    // Vacuumed as autovacuum leaves a live indexer's tables, so index-only scans (the counts) skip the heap.
    `VACUUM (ANALYZE) ${everyTable}`,
    // How npm start's banner tells demo data from an indexer's (or simulate's) own.
    `COMMENT ON SCHEMA "${indexerSchema()}" IS '${demoDataMark}'`,
  ];
  for (const statement of statements) await client.query(statement);
  // Ponder's position, as Ponder would have left it after the demo data's latest block: freshness and minBlock work locally.
  await createPonderCheckpoint(client);
  const { rows } = await client.query<{ value: string }>(latestBlockSql);
  await advanceCheckpoint(client, BigInt(rows[0]?.value ?? '0'));
}

/** The chain the demo data (and `npm run simulate`) is of: Hardhat's and Anvil's id, as the real-Ponder tests' chain. */
export const demoChainId = 31337;

/** The latest block in the indexer's tables: where the demo data's checkpoint stands; simulate's next block is the one after. */
export const latestBlockSql = `SELECT greatest((SELECT max(updated_at_block) FROM ${indexerTable('listings')}), (SELECT max(block_number) FROM ${indexerTable('forge_requests')}),
  (SELECT max(fulfilled_at_block) FROM ${indexerTable('forge_requests')}), (SELECT max(block_number) FROM ${indexerTable('sales')}), 0)::text AS value`;

/**
 * Ponder's checkpoint string for the end of `block` on the demo chain: 10 digits of block timestamp, 16 of chain id,
 * 16 of block number, then the event's position, all nines at a block's end (packages/core/src/indexer/freshness.ts decodes it).
 */
export const ponderCheckpoint = (block: bigint, timestamp = Math.floor(Date.now() / 1000)) =>
  `${String(timestamp).padStart(10, '0')}${String(demoChainId).padStart(16, '0')}${String(block).padStart(16, '0')}${'9'.repeat(33)}`;

/**
 * Ponder's bookkeeping tables, as Ponder creates them in its schema: `_ponder_meta` (`is_ready` once the backfill is done,
 * which demo data is) and `_ponder_checkpoint` (per chain, the latest, safe and finalized checkpoints), what
 * packages/core/src/indexer/freshness-read.ts reads.
 */
export async function createPonderCheckpoint(client: Queryable): Promise<void> {
  await client.query(`CREATE TABLE IF NOT EXISTS ${indexerTable('_ponder_meta')} (key text PRIMARY KEY, value jsonb)`);
  await client.query(`INSERT INTO ${indexerTable('_ponder_meta')} VALUES ('app', '{"is_ready": 1, "is_dev": 0, "version": "6"}') ON CONFLICT (key) DO NOTHING`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${indexerTable('_ponder_checkpoint')} (chain_name text PRIMARY KEY, chain_id bigint NOT NULL,
    safe_checkpoint varchar(75) NOT NULL, latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL)`);
}

/**
 * Moves the demo chain's checkpoint to the end of `block`, as Ponder does in the transaction that writes a block's rows.
 * Safe and finalized are the same block: the demo chain never reorgs. Never backwards.
 */
export async function advanceCheckpoint(client: Queryable, block: bigint): Promise<void> {
  const checkpoint = ponderCheckpoint(block);
  await client.query(
    `INSERT INTO ${indexerTable('_ponder_checkpoint')} VALUES ('demo', $1, $2, $2, $2)
     ON CONFLICT (chain_name) DO UPDATE SET latest_checkpoint = excluded.latest_checkpoint, safe_checkpoint = excluded.safe_checkpoint,
       finalized_checkpoint = excluded.finalized_checkpoint
     WHERE substr(${indexerTable('_ponder_checkpoint')}.latest_checkpoint, 27, 16) <= substr(excluded.latest_checkpoint, 27, 16)`,
    [demoChainId, checkpoint],
  );
}

const demoDataMark = 'Hatchery demo data';

/** What the indexer schema holds now, for npm start's banner: nothing, or so many editions and listings, demo data or not. */
export async function indexerContents(client: Queryable): Promise<{ present: false } | { present: true; demo: boolean; editions: number; listings: number }> {
  const { rows } = await client.query<{ present: boolean; mark: string | null }>(
    `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS present, obj_description(to_regnamespace($3), 'pg_namespace') AS mark`,
    [indexerTable('editions'), indexerTable('listings'), `"${indexerSchema()}"`],
  );
  if (!rows[0]?.present) return { present: false };
  const counts = await client.query<{ editions: number; listings: number }>(
    `SELECT (SELECT count(*) FROM ${indexerTable('editions')})::int AS editions, (SELECT count(*) FROM ${indexerTable('listings')})::int AS listings`,
  );
  return { present: true, demo: rows[0].mark === demoDataMark, ...counts.rows[0]! };
}
