import { limits } from '../limits';
import { currentSummary } from './summary-store';
import type { SummaryDto } from './summary';

let cached: { value: SummaryDto; expiresAt: number } | undefined;
let inFlight: Promise<SummaryDto> | undefined;

/**
 * The summary, cached in process memory until limits.summaryCacheMs after the
 * totals were exact: a cold instance reads the row the leading listener keeps,
 * and sums only when that row is older (summary-store.ts). Concurrent misses
 * share one read; a failed read is never cached, so the next call tries again.
 */
export function getSummary(): Promise<SummaryDto> {
  if (cached && Date.now() < cached.expiresAt) return Promise.resolve(cached.value);
  inFlight ??= readAndKeep().finally(() => {
    inFlight = undefined;
  });
  return inFlight;
}

async function readAndKeep(): Promise<SummaryDto> {
  const askedAt = Date.now();
  const { value, ageMs } = await currentSummary();
  cached = { value, expiresAt: askedAt + limits.summaryCacheMs - ageMs };
  return value;
}
