import { indexedBlockHeader, indexedBlockValue } from '@hatchery/core/indexer/freshness';
import { currentFreshness } from '@hatchery/core/indexer/freshness-read';
import type { HttpMiddleware } from './types';

/**
 * `X-Indexed-Block` on a list's success: how far the index had got when the
 * page was read. Asked before the handler runs, so the header never claims
 * more than the page holds. Without Ponder's tables, or when they cannot be
 * read, there is no header and the list answers as ever.
 */
export const indexedBlock = (): HttpMiddleware => {
  const byEvent = new WeakMap<object, string>();
  return {
    before: async (request) => {
      const value = indexedBlockValue(await currentFreshness().catch(() => 'unknown' as const));
      if (value !== undefined) byEvent.set(request.event, value);
    },
    after: (request) => {
      const value = byEvent.get(request.event);
      if (request.response?.statusCode !== 200 || value === undefined) return;
      request.response.headers = { ...request.response.headers, [indexedBlockHeader]: value };
    },
  };
};
