import * as z from 'zod';
import { isMissingRelation, query } from '../db';
import { limits } from '../limits';
import { bigIntString } from './wire';
import { indexerTable } from './names';

export const summarySchema = z.object({
  salesCount: z.number().int(),
  totalVolume: bigIntString.describe('Wei: the sum of all sale prices.'),
  nftCount: z.number().int().describe('NFTs not burned.'),
  editionCount: z.number().int(),
  totalTokenTransferred: bigIntString.describe('The sum of all transfers of the service token.'),
});

export type SummaryDto = z.infer<typeof summarySchema>;

type SummaryRow = { salesCount: string; totalVolume: string; nftCount: string; editionCount: string; totalTokenTransferred: string };

// One round trip; the sums stay numeric in the database so they cannot overflow.
const summarySql = () => `SELECT s."salesCount", s."totalVolume", n."nftCount", e."editionCount", t."totalTokenTransferred"
  FROM (SELECT count(*) AS "salesCount", coalesce(sum(price), 0)::text AS "totalVolume" FROM ${indexerTable('sales')}) s,
       (SELECT count(*) AS "nftCount" FROM ${indexerTable('nfts')} WHERE NOT burned) n,
       (SELECT count(*) AS "editionCount" FROM ${indexerTable('editions')}) e,
       (SELECT coalesce(sum(value), 0)::text AS "totalTokenTransferred" FROM ${indexerTable('token_transfers')}) t`;

const emptySummary: SummaryDto = { salesCount: 0, totalVolume: '0', nftCount: 0, editionCount: 0, totalTokenTransferred: '0' };

/** The five totals, straight from the database; zeros before the indexer has created its tables. */
async function readSummary(): Promise<SummaryDto> {
  try {
    const [row] = await query<SummaryRow>(summarySql());
    if (!row) return emptySummary;
    return {
      salesCount: Number(row.salesCount),
      totalVolume: row.totalVolume,
      nftCount: Number(row.nftCount),
      editionCount: Number(row.editionCount),
      totalTokenTransferred: row.totalTokenTransferred,
    };
  } catch (error) {
    if (isMissingRelation(error)) return emptySummary;
    throw error;
  }
}

let cached: { value: SummaryDto; expiresAt: number } | undefined;
let inFlight: Promise<SummaryDto> | undefined;

/**
 * The summary, cached in process memory for limits.summaryCacheMs. Concurrent
 * misses share one read; a failed read is never cached, so the next call tries again.
 */
export function getSummary(): Promise<SummaryDto> {
  if (cached && Date.now() < cached.expiresAt) return Promise.resolve(cached.value);
  inFlight ??= readSummary()
    .then((value) => {
      cached = { value, expiresAt: Date.now() + limits.summaryCacheMs };
      return value;
    })
    .finally(() => {
      inFlight = undefined;
    });
  return inFlight;
}
