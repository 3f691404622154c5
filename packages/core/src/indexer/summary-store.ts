import { isMissingRelation, query, type Queryable } from '../db';
import { indexerTable } from './names';
import type { SummaryDto } from './summary';

export const summaryLimits = {
  /** The oldest summary served: a stored row younger than this, or an instance's own sums until they are this old (summary-read.ts). */
  cacheMs: 30_000,
  /**
   * The leading listener's sums of the summary's row (listener/src/summary.ts): at most once per `changedMs` while
   * notifications name a summed table, and at least once per `maxIntervalMs` whatever they say (a reorg's revert
   * names no table), so its row, a sum's start plus its length old, stays inside `cacheMs` for every cold instance.
   */
  refresh: { changedMs: 10_000, maxIntervalMs: 20_000 },
} as const;

/** The indexer's tables the summary sums: a change to any other leaves it exact. */
export const summaryTables = ['sales', 'nfts', 'editions', 'token_transfers'] as const;

// One round trip; the sums stay numeric in the database so they cannot overflow.
const sumsSql = () => `SELECT s.sales_count, s.total_volume, n.nft_count, e.edition_count, t.total_token_transferred
  FROM (SELECT count(*) AS sales_count, coalesce(sum(price), 0) AS total_volume FROM ${indexerTable('sales')}) s,
       (SELECT count(*) AS nft_count FROM ${indexerTable('nfts')} WHERE NOT burned) n,
       (SELECT count(*) AS edition_count FROM ${indexerTable('editions')}) e,
       (SELECT coalesce(sum(value), 0) AS total_token_transferred FROM ${indexerTable('token_transfers')}) t`;

const totalsColumns = `sales_count::text AS "salesCount", total_volume::text AS "totalVolume", nft_count::text AS "nftCount",
  edition_count::text AS "editionCount", total_token_transferred::text AS "totalTokenTransferred"`;

/**
 * Sums, and stores the sums for every other instance, in one statement. `as_of`
 * is the statement's start, which precedes the snapshot it sums, so the totals
 * are exact at least as of then; a row summed later is never replaced.
 */
const sumAndStoreSql = () => `WITH sums AS (${sumsSql()}),
  stored AS (
    INSERT INTO hatchery.summary AS kept (id, sales_count, total_volume, nft_count, edition_count, total_token_transferred, as_of)
    SELECT true, sales_count, total_volume, nft_count, edition_count, total_token_transferred, now() FROM sums
    ON CONFLICT (id) DO UPDATE SET sales_count = excluded.sales_count, total_volume = excluded.total_volume, nft_count = excluded.nft_count,
      edition_count = excluded.edition_count, total_token_transferred = excluded.total_token_transferred, as_of = excluded.as_of
    WHERE kept.as_of < excluded.as_of
  )
  SELECT ${totalsColumns} FROM sums`;

/** Before the migrations have created the table: the sums alone. */
const sumOnlySql = () => `SELECT ${totalsColumns} FROM (${sumsSql()}) sums`;

/** The stored row and its age, both by the database's clock, so no instance's clock matters. */
const storedSql = `SELECT ${totalsColumns}, greatest(0, extract(epoch FROM now() - as_of) * 1000)::float8 AS "ageMs" FROM hatchery.summary WHERE id`;

type TotalsRow = Record<keyof SummaryDto, string>;

const toSummary = (row: TotalsRow): SummaryDto => ({
  salesCount: Number(row.salesCount),
  totalVolume: row.totalVolume,
  nftCount: Number(row.nftCount),
  editionCount: Number(row.editionCount),
  totalTokenTransferred: row.totalTokenTransferred,
});

const emptySummary: SummaryDto = { salesCount: 0, totalVolume: '0', nftCount: 0, editionCount: 0, totalTokenTransferred: '0' };

/** The totals, and how old they were (ms) when they were asked for: the rest of the cache lifetime is what an instance may keep them. */
export interface AgedSummary {
  value: SummaryDto;
  ageMs: number;
}

/** The stored row; `undefined` when there is none yet, 'no table' before the migration that creates it. */
async function readStored(): Promise<AgedSummary | undefined | 'no table'> {
  try {
    const [row] = await query<TotalsRow & { ageMs: number }>(storedSql);
    return row && { value: toSummary(row), ageMs: row.ageMs };
  } catch (error) {
    if (isMissingRelation(error)) return 'no table';
    throw error;
  }
}

/** Zeros before the indexer has created its tables. */
async function sum(sql: string): Promise<SummaryDto> {
  try {
    const [row] = await query<TotalsRow>(sql);
    return row ? toSummary(row) : emptySummary;
  } catch (error) {
    if (isMissingRelation(error)) return emptySummary;
    throw error;
  }
}

/**
 * What an instance serves: the stored row while it is younger than the cache
 * lifetime (the leading listener keeps it so), else the instance's own sums,
 * which it stores for the others.
 */
export async function currentSummary(): Promise<AgedSummary> {
  const stored = await readStored();
  if (stored !== 'no table' && stored && stored.ageMs < summaryLimits.cacheMs) return stored;
  return { value: await sum(stored === 'no table' ? sumOnlySql() : sumAndStoreSql()), ageMs: 0 };
}

/** The instance's own sums, stored for the others: newer than anything the stored row may hold. */
export async function summedSummary(): Promise<AgedSummary> {
  const stored = await readStored();
  return { value: await sum(stored === 'no table' ? sumOnlySql() : sumAndStoreSql()), ageMs: 0 };
}

/** Sums and stores the row (the listener's refresh); false when there was nothing to store, before the indexer's tables or the migration exist. */
export async function storeSummary(session: Queryable): Promise<boolean> {
  try {
    await session.query(sumAndStoreSql());
    return true;
  } catch (error) {
    if (isMissingRelation(error)) return false;
    throw error;
  }
}
