import { currentFreshness, readPooledFreshness } from './freshness-read';
import { unknownUnlessUnavailable, type Freshness } from './freshness';
import type { MinBlock } from './min-block';
import { currentSummary, summaryLimits, summedSummary, type AgedSummary } from './summary-store';
import type { SummaryDto } from './summary';

/** The summary an instance keeps, and the index it is known to be exact at least as of (`unknown` for the stored row's, whose block is not kept). */
interface Kept {
  value: SummaryDto;
  expiresAt: number;
  asOf: Freshness;
}

let cached: Kept | undefined;
let inFlight: Promise<Kept> | undefined;
let summing: Promise<Kept> | undefined;

/**
 * The summary, cached in process memory until summaryLimits.cacheMs after the
 * totals were exact: a cold instance reads the row the leading listener keeps,
 * and sums only when that row is older (summary-store.ts). Concurrent misses
 * share one read; a failed read is never cached, so the next call tries again.
 * Given the `minBlock` its request waited for, the kept summary serves only
 * if it is known to be as of that block or later; else the instance sums.
 */
export async function getSummary(minBlock?: MinBlock): Promise<SummaryDto> {
  if (cached && Date.now() < cached.expiresAt && (!minBlock || reaches(cached.asOf, minBlock))) return cached.value;
  if (!minBlock) {
    inFlight ??= readAndKeep(currentSummary, currentFreshness).finally(() => {
      inFlight = undefined;
    });
    return (await inFlight).value;
  }
  // Concurrent requests share a sum; one that started before this request's block was indexed does not count.
  const shared = summing && (await summing.catch(() => undefined));
  if (shared && reaches(shared.asOf, minBlock)) return shared.value;
  summing ??= readAndKeep(summedSummary, readPooledFreshness).finally(() => {
    summing = undefined;
  });
  return (await summing).value;
}

/** Whether totals as of `asOf` include `minBlock`; a bare block means the only chain (awaitMinBlock has checked there is one). */
function reaches(asOf: Freshness, minBlock: MinBlock): boolean {
  if (asOf === 'unknown') return false;
  const chain = minBlock.chainId === undefined ? asOf.chains[0] : asOf.chains.find((each) => each.chainId === minBlock.chainId);
  return chain !== undefined && BigInt(chain.block) >= minBlock.block;
}

async function readAndKeep(read: () => Promise<AgedSummary>, position: () => Promise<Freshness>): Promise<Kept> {
  const askedAt = Date.now();
  // Read before the sums start, so the totals are exact at least as of this position.
  const before = await position().catch(unknownUnlessUnavailable);
  const { value, ageMs } = await read();
  const kept: Kept = { value, expiresAt: askedAt + summaryLimits.cacheMs - ageMs, asOf: ageMs === 0 ? before : 'unknown' };
  // A slower read that started earlier never replaces what a later one kept.
  if (!cached || cached.expiresAt <= kept.expiresAt) cached = kept;
  return kept;
}
