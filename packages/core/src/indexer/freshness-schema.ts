import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/*
 * The freshness as /health describes it in the OpenAPI document. Apart from
 * freshness.ts, which takes only its types: every indexed read imports that,
 * and constructing these schemas cost each one's cold start for a document
 * only /health and the OpenAPI function serve.
 */

const chainFreshnessSchema = z.object({
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
