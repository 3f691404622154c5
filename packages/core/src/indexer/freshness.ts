import { limits } from '../limits';
import { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader } from './names';
import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

export const chainFreshnessSchema = z.object({
  chainId: z.int().check(z.describe('The chain, by its EIP-155 id.')),
  block: bigIntString.check(z.describe('The last block the indexer has indexed on this chain.')),
  safeBlock: bigIntString.check(
    z.describe("Ponder's safe block: up to it the indexer has pruned its reorg log, and it restarts from it after a crash. At or below the finalized block."),
  ),
  finalizedBlock: bigIntString.check(
    z.describe('The block the indexer holds final: it never reverts a row written at or below it. A row whose block is above it can still be reorged out.'),
  ),
  blockTimestamp: z.string().check(z.describe("That block's time, ISO 8601 UTC.")),
  lagSeconds: z.int().check(z.describe("Seconds from that block's time to now: how far behind the chain the data may be.")),
  ready: z.boolean().check(z.describe('Whether the indexer has finished its backfill and indexes live. Until then the data is partial.')),
});

export const freshnessSchema = z.union([z.object({ chains: z.array(chainFreshnessSchema) }), z.literal('unknown')]);

export type ChainFreshness = z.infer<typeof chainFreshnessSchema>;
/** How far the index has got, per chain; `unknown` where the indexer keeps no Ponder checkpoint (another indexer; the local demo data keeps one). */
export type Freshness = z.infer<typeof freshnessSchema>;

/** Ponder's checkpoint string: 10 digits of block timestamp, 16 of chain id, 16 of block number, then the event's position. */
export function decodeCheckpoint(checkpoint: string): { timestamp: number; chainId: number; block: string } | undefined {
  if (!/^[0-9]{42,}$/.test(checkpoint)) return undefined;
  return { timestamp: Number(checkpoint.slice(0, 10)), chainId: Number(checkpoint.slice(10, 26)), block: BigInt(checkpoint.slice(26, 42)).toString() };
}

export { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader };

type BlockOf = 'block' | 'safeBlock' | 'finalizedBlock';

/** `<chainId>=<block>` pairs of one of the chains' blocks; undefined when the freshness is unknown. */
function blockPairs(freshness: Freshness, which: BlockOf): string | undefined {
  if (freshness === 'unknown') return undefined;
  return freshness.chains.map((chain) => `${chain.chainId}=${chain[which]}`).join(', ');
}

export const indexedBlockValue = (freshness: Freshness): string | undefined => blockPairs(freshness, 'block');

/** The freshness headers of an indexed read's success, by header name; none when the freshness is unknown. */
export function freshnessHeaders(freshness: Freshness): Record<string, string> {
  if (freshness === 'unknown') return {};
  return {
    [indexedBlockHeader]: blockPairs(freshness, 'block')!,
    [safeBlockHeader]: blockPairs(freshness, 'safeBlock')!,
    [finalizedBlockHeader]: blockPairs(freshness, 'finalizedBlock')!,
  };
}

/**
 * The freshness, read at most once per `ttlMs` per instance: the lists ask
 * for it on every request, and it moves once per block. A read that fails
 * is not kept, so the next request asks again.
 */
export function cachedFreshness(read: () => Promise<Freshness>, ttlMs: number = limits.freshnessCacheMs, clock: () => number = Date.now) {
  let kept: { value: Promise<Freshness>; at: number } | undefined;
  return (): Promise<Freshness> => {
    const now = clock();
    if (!kept || now - kept.at >= ttlMs) {
      const value = read();
      kept = { value, at: now };
      value.catch(() => {
        if (kept?.value === value) kept = undefined;
      });
    }
    return kept.value;
  };
}
