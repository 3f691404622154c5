import { isDatabaseUnavailable } from '../errors';
import { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader } from './names';
import type { Freshness } from './freshness-schema';

export type { ChainFreshness, Freshness } from './freshness-schema';

/** Ponder's checkpoint string: 10 digits of block timestamp, 16 of chain id, 16 of block number, then the event's position. */
export function decodeCheckpoint(checkpoint: string): { timestamp: number; chainId: number; block: string } | undefined {
  if (!/^[0-9]{42,}$/.test(checkpoint)) return undefined;
  return { timestamp: Number(checkpoint.slice(0, 10)), chainId: Number(checkpoint.slice(10, 26)), block: BigInt(checkpoint.slice(26, 42)).toString() };
}

export { indexedBlockHeader };

/** How long an instance reuses what it read of the indexer's position (the lists' X-Indexed-Block, /health). */
export const freshnessCacheMs = 1_000;

/**
 * A failed read of the position, for a read that asks for it first: unknown, unless the database did not answer,
 * which the read's own statements would meet too, after waiting as long again; then the failure stands (503).
 */
export function unknownUnlessUnavailable(error: unknown): Freshness {
  if (isDatabaseUnavailable(error)) throw error;
  return 'unknown';
}

type BlockOf = 'block' | 'safeBlock' | 'finalizedBlock';

/** `<chainId>=<block>` pairs of one of the chains' blocks; undefined when the freshness is unknown. */
function blockPairs(freshness: Freshness, which: BlockOf): string | undefined {
  if (freshness === 'unknown') return undefined;
  return freshness.chains.map((chain) => `${chain.chainId}=${chain[which]}`).join(', ');
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({});
const headersOf = new WeakMap<object, Readonly<Record<string, string>>>();

/**
 * The freshness headers of an indexed read's success, by header name; none when the freshness is unknown.
 * Made once per freshness read: every request until the next read answers the same ones.
 */
export function freshnessHeaders(freshness: Freshness): Readonly<Record<string, string>> {
  if (freshness === 'unknown') return noHeaders;
  let headers = headersOf.get(freshness);
  if (!headers) {
    headers = {
      [indexedBlockHeader]: blockPairs(freshness, 'block')!,
      [safeBlockHeader]: blockPairs(freshness, 'safeBlock')!,
      [finalizedBlockHeader]: blockPairs(freshness, 'finalizedBlock')!,
    };
    headersOf.set(freshness, headers);
  }
  return headers;
}

/** The instance's view of the index: a read shared for `ttlMs`, and what that read found once it has. */
interface CachedFreshness {
  (): Promise<Freshness>;
  /** The kept read's answer while it is fresh and has come; otherwise undefined, and the call above reads. */
  settled(): Freshness | undefined;
}

/**
 * The freshness, read at most once per `ttlMs` per instance: the lists ask
 * for it on every request, and it moves once per block. A read that fails
 * is not kept, so the next request asks again.
 */
export function cachedFreshness(read: () => Promise<Freshness>, ttlMs: number = freshnessCacheMs, clock: () => number = Date.now): CachedFreshness {
  let kept: { value: Promise<Freshness>; at: number; answer?: Freshness } | undefined;
  const current = (): Promise<Freshness> => {
    const now = clock();
    if (!kept || now - kept.at >= ttlMs) {
      const entry: NonNullable<typeof kept> = { value: read(), at: now };
      kept = entry;
      entry.value.then(
        (answer) => {
          entry.answer = answer;
        },
        () => {
          if (kept === entry) kept = undefined;
        },
      );
    }
    return kept.value;
  };
  return Object.assign(current, {
    settled: () => (kept && clock() - kept.at < ttlMs ? kept.answer : undefined),
  });
}
