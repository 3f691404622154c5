import { freshnessHeaders, unknownUnlessUnavailable, type Freshness } from '@hatchery/core/indexer/freshness';
import { currentFreshness } from '@hatchery/core/indexer/freshness-read';
import { polledFreshness } from '@hatchery/core/indexer/min-block-read';
import { awaitMinBlock, parseMinBlock } from '@hatchery/core/indexer/min-block';
import { requestState } from './request-state';
import type { HttpMiddleware } from './types';

export interface IndexedRead {
  /** `X-Indexed-Block`, `X-Safe-Block` and `X-Finalized-Block` on a success; registered before the response is serialized. */
  report: HttpMiddleware;
  /** The wait for the request's `minBlock`; registered after the input is validated. */
  minBlock: HttpMiddleware;
}

/**
 * How far the index had got when the data was read, on every indexed read's
 * success. Asked before the handler runs, so the headers never claim more
 * than the answer holds; after a `minBlock` wait, they are what the wait saw
 * (that block or later). Without Ponder's tables, or when another failure
 * keeps them from being read, there are no headers and the read answers as
 * ever; a database that does not answer makes the read unavailable (503).
 */
export const indexedRead = (): IndexedRead => {
  const seen = requestState<Freshness>('freshness seen');
  return {
    report: {
      before: (request) => {
        // Known already on almost every request: then set at once, with no promise for Middy to wait on.
        const known = currentFreshness.settled();
        if (known !== undefined) {
          seen.set(request, known);
          return;
        }
        return currentFreshness().then(
          (freshness) => seen.set(request, freshness),
          (error: unknown) => seen.set(request, unknownUnlessUnavailable(error)),
        );
      },
      after: (request) => {
        const freshness = seen.get(request);
        if (request.response?.statusCode !== 200 || freshness === undefined) return;
        Object.assign((request.response.headers ??= {}), freshnessHeaders(freshness));
      },
    },
    minBlock: {
      // Not async: a request without minBlock gives Middy no promise to wait on.
      before: (request) => {
        const target = parseMinBlock((request.context.input.query as { minBlock?: string } | undefined)?.minBlock);
        if (!target) return;
        // The instance's shared position first, which costs nothing when the block is already reached; then polls.
        let polls = 0;
        const poll = () => (polls++ === 0 ? currentFreshness() : polledFreshness());
        return awaitMinBlock(target, { read: poll }).then((freshness) => {
          seen.set(request, freshness);
        });
      },
    },
  };
};
