import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { limits } from '../limits';

export interface CountCacheOptions {
  ttlMs: number;
  maxEntries: number;
  /** The clock; tests pass their own. */
  perf?: { now(): number };
}

export interface CountCache {
  /** The count under `key`: a fresh one shared for ttlMs, else `load`'s, one load per key at a time. A failed load is not kept. */
  get(key: string, load: () => Promise<number>): Promise<number>;
}

export function createCountCache(options: CountCacheOptions): CountCache {
  const cache = new LRUCache<string, number, () => Promise<number>>({
    max: options.maxEntries,
    ttl: options.ttlMs,
    perf: options.perf,
    // Read the clock at every check, not once a millisecond through a timer (which an injected clock does not drive).
    ttlResolution: 0,
    fetchMethod: (_key, _stale, { context }) => context(),
  });
  return {
    async get(key, load) {
      // Keys hold whole statements and their values; a digest keeps each entry small whatever the filter.
      const count = await cache.fetch(createHash('sha256').update(key).digest('base64url'), { context: load });
      // fetch() resolves undefined only when the fetch is aborted, which nothing here does.
      return count ?? load();
    },
  };
}

/** The instance's counts of the list endpoints (DESIGN.md: shared for a few seconds, the data being eventually consistent). */
export const listCounts = createCountCache(limits.countCache);
