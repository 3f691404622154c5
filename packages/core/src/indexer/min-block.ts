import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, validationError } from '../errors';
import * as z from '@hatchery/platform/schema';
import type { ChainFreshness, Freshness } from './freshness';

/**
 * `minBlock`, "answer from an index that has reached this block", taken by
 * every read of the indexer's data (docs/http-api.md "Reading your own
 * writes"). The schema checks its form only; how it compares with the index
 * is `awaitMinBlock`'s.
 */

/**
 * How long a request waits for the index to reach its block before answering 409, polling Ponder's checkpoint every
 * `pollMs` (one query per instance per tick, on a pooled connection held only for it); a block more than
 * `maxAheadBlocks` past the indexed one is refused at once (422).
 */
export const minBlockLimits = { waitMs: 3_000, pollMs: 200, maxAheadBlocks: 10_000, retryAfterSeconds: 1 } as const;

/** At most 16 digits each, the width of Ponder's checkpoint fields; blank is none, as for the lists' other parameters. */
const minBlockPattern = /^(?:(?:([0-9]{1,16}):)?([0-9]{1,16}))?$/;

// Registered, not `.check(z.describe())`, which would clone the schema at every indexed read's cold start.
export const minBlockParam = z.optional(z.string().check(z.regex(minBlockPattern, 'must be a block number, or <chainId>:<block>'))).register(z.globalRegistry, {
  description:
    `Answer from an index that has reached this block: \`<block>\`, or \`<chainId>:<block>\` (the chain may be left out while one chain is indexed). ` +
    `Waits up to ${minBlockLimits.waitMs / 1000} s for it, then answers 409 with \`Retry-After\`; more than ${minBlockLimits.maxAheadBlocks} blocks past the indexed block is a 422. ` +
    'A success was read at or after that block (`X-Indexed-Block`). Blank is none.',
});

/** The query of an indexed read that takes no other parameter (the referral and the summary). */
export const minBlockQuerySchema = z.object({ minBlock: minBlockParam });

export interface MinBlock {
  chainId?: number;
  block: bigint;
}

/** A well-formed `minBlock` (see minBlockParam), or undefined for none or a blank one. */
export function parseMinBlock(text: string | undefined): MinBlock | undefined {
  const match = text ? minBlockPattern.exec(text) : null;
  if (!match || match[2] === undefined) return undefined;
  return { ...(match[1] !== undefined && { chainId: Number(match[1]) }), block: BigInt(match[2]!) };
}

/** The chain a minBlock names, or the only one indexed; a 422 naming minBlock otherwise. */
function chainOf(target: MinBlock, freshness: Freshness): ChainFreshness {
  if (freshness === 'unknown') {
    throw new AppError(
      'notIndexedYet',
      'minBlock cannot be checked: the indexer keeps no Ponder checkpoint (yet), so how far it has got is unknown.',
      undefined,
      {
        'retry-after': String(minBlockLimits.retryAfterSeconds),
      },
      { indexedBlock: 'unknown' },
    );
  }
  const { chains } = freshness;
  if (target.chainId === undefined) {
    if (chains.length === 1) return chains[0]!;
    throw validationError('minBlock', `several chains are indexed (${chains.map((chain) => chain.chainId).join(', ')}): name one, as <chainId>:<block>`);
  }
  const chain = chains.find((each) => each.chainId === target.chainId);
  if (!chain) throw validationError('minBlock', `chain ${target.chainId} is not indexed (indexed: ${chains.map((each) => each.chainId).join(', ')})`);
  return chain;
}

interface MinBlockWait {
  /** The freshness, read again at most once per poll interval. */
  read: () => Promise<Freshness>;
  waitMs?: number;
  pollMs?: number;
  clock?: () => number;
}

/**
 * Resolves with the freshness once the index has reached `target` (at once
 * when it already has), polling within `waitMs`. A block that stays ahead is
 * a 409 naming minBlock and the indexed block, with Retry-After; one beyond
 * any plausible head, or on no indexed chain, is a 422. No database
 * connection is held between polls.
 */
export async function awaitMinBlock(
  target: MinBlock,
  { read, waitMs = minBlockLimits.waitMs, pollMs = minBlockLimits.pollMs, clock = Date.now }: MinBlockWait,
): Promise<Freshness> {
  const deadline = clock() + waitMs;
  for (;;) {
    const freshness = await read();
    const chain = chainOf(target, freshness);
    const indexed = BigInt(chain.block);
    if (indexed >= target.block) return freshness;
    if (target.block - indexed > BigInt(minBlockLimits.maxAheadBlocks)) {
      throw validationError('minBlock', `is more than ${minBlockLimits.maxAheadBlocks} blocks past the indexed block ${indexed} of chain ${chain.chainId}`);
    }
    if (clock() + pollMs > deadline) throw notReached(target, chain, waitMs);
    await sleep(pollMs);
  }
}

function notReached(target: MinBlock, chain: ChainFreshness, waitMs: number): AppError {
  return new AppError(
    'notIndexedYet',
    `minBlock ${target.block} is not indexed yet on chain ${chain.chainId}: the index is at block ${chain.block} after ${waitMs} ms. Try again after Retry-After.`,
    undefined,
    { 'retry-after': String(minBlockLimits.retryAfterSeconds) },
    { minBlock: `${chain.chainId}:${target.block}`, indexedBlock: `${chain.chainId}:${chain.block}` },
  );
}
