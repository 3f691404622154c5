import type { ApiClient } from './api.js';
import { sleep } from './timing.js';

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
export async function waitForIndexedBlock(client: ApiClient, block: bigint | number | string, options: IndexWaitOptions = {}): Promise<bigint> {
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
