import { LRUCache } from '@aws-lambda-powertools/commons/utils/lru-cache';

/** A list's totalCount is shared per instance for this long, keyed by list and compiled filter; the entries are bounded. */
export const countCacheLimits = { ttlMs: 5_000, maxEntries: 10_000 } as const;

interface CountCacheOptions {
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
  const clock = options.perf ?? performance;
  // A count still loading expires never, so that concurrent callers share its one load.
  const entries = new LRUCache<string, { count: Promise<number>; expiresAt: number }>({ maxSize: options.maxEntries });
  return {
    get(key, load) {
      const cached = entries.get(key);
      if (cached && clock.now() < cached.expiresAt) return cached.count;
      const entry = { count: load(), expiresAt: Infinity };
      entries.add(key, entry);
      entry.count.then(
        () => {
          entry.expiresAt = clock.now() + options.ttlMs;
        },
        () => {
          if (entries.get(key) === entry) entries.remove(key);
        },
      );
      return entry.count;
    },
  };
}

/** The instance's counts of the list endpoints (docs/http-api.md, Counts and caching: shared for a few seconds, the data being eventually consistent). */
export const listCounts = createCountCache(countCacheLimits);
