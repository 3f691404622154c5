import type { Client } from './client.js';
import { sleep } from './timing.js';

/** The block each chain's data was indexed up to, by chain id. */
export type IndexedBlocks = Readonly<Record<number, bigint>>;

const seen = new WeakMap<object, IndexedBlocks>();

/** `X-Indexed-Block: 31337=120, 8453=5000` read into blocks by chain id; pairs that are not such are skipped. */
export function parseIndexedBlock(header: string): IndexedBlocks {
  const blocks: Record<number, bigint> = {};
  for (const pair of header.split(',')) {
    const match = /^\s*(\d+)=(\d+)\s*$/.exec(pair);
    if (match) blocks[Number(match[1])] = BigInt(match[2]!);
  }
  return blocks;
}

/** Kept by the client for each body whose response named the indexed block. */
export function rememberIndexedBlock(body: unknown, header: string | null): void {
  if (header !== null && typeof body === 'object' && body !== null) seen.set(body, parseIndexedBlock(header));
}

/**
 * How far the index had got when the server read this page (its
 * `X-Indexed-Block`), by chain id; undefined when the server could not tell
 * (an indexer other than Ponder, the demo data). A page whose chain's block
 * is at least the block of your transaction includes what it did.
 */
export function indexedBlocks(page: object): IndexedBlocks | undefined {
  return seen.get(page);
}

export interface IndexWaitOptions {
  /** The chain to wait on; may be left out when the indexer follows one chain. */
  chainId?: number;
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  /** How often /health is asked (default 1 s). */
  intervalMs?: number;
  signal?: AbortSignal;
}

export class IndexWaitError extends Error {
  constructor(
    message: string,
    readonly block: bigint,
    readonly indexed?: bigint,
  ) {
    super(message);
    this.name = 'IndexWaitError';
  }
}

/**
 * Resolves once the index has reached `block` on the chain (from /health),
 * so that a front end that sent a transaction in that block reads pages that
 * include it. Rejects with IndexWaitError after `timeoutMs`, or at once when
 * the server cannot tell how far its index has got.
 */
export async function waitForIndexedBlock(client: Client, block: bigint | number | string, options: IndexWaitOptions = {}): Promise<bigint> {
  const target = BigInt(block);
  const { timeoutMs = 60_000, intervalMs = 1_000, signal } = options;
  const deadline = Date.now() + timeoutMs;
  let indexed: bigint | undefined;
  for (;;) {
    const health = await client.api.health(undefined, { signal });
    if (health.indexer === 'unknown') throw new IndexWaitError('The server cannot tell how far its index has got (no Ponder checkpoint).', target);
    const chains = health.indexer.chains;
    const chain = options.chainId === undefined ? (chains.length === 1 ? chains[0] : undefined) : chains.find((each) => each.chainId === options.chainId);
    if (!chain)
      throw new IndexWaitError(
        options.chainId === undefined ? 'The index follows several chains: name one with chainId.' : `The index does not follow chain ${options.chainId}.`,
        target,
      );
    indexed = BigInt(chain.block);
    if (indexed >= target) return indexed;
    if (Date.now() + intervalMs > deadline)
      throw new IndexWaitError(`The index reached block ${indexed}, not ${target}, within ${timeoutMs} ms.`, target, indexed);
    await sleep(intervalMs, signal);
  }
}
