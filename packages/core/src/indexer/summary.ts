import * as z from '../schema';
import { limits } from '../limits';
import { currentSummary } from './summary-store';
import { bigIntString } from './wire';

export const summarySchema = z.object({
  salesCount: z.int(),
  totalVolume: bigIntString.check(z.describe('Wei: the sum of all sale prices.')),
  nftCount: z.int().check(z.describe('NFTs not burned.')),
  editionCount: z.int(),
  totalTokenTransferred: bigIntString.check(z.describe('The sum of all transfers of the service token.')),
});

export type SummaryDto = z.infer<typeof summarySchema>;

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
