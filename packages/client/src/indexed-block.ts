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
