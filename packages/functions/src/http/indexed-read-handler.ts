import { indexedRead } from '../middleware/indexed-block';
import type { HttpContext, HttpEvent } from '../middleware/types';
import type { HttpRoute } from '../routes';
import { httpHandler, type RouteInput } from './handler';

/** A handler for a read of the indexer's data (a list, the referral, the summary): it takes `minBlock`, and its successes carry the index's position. */
export function indexedReadHandler<R extends HttpRoute & { indexed: true }, T>(
  route: R,
  run: (input: RouteInput<R>, context: HttpContext, event: HttpEvent) => Promise<T>,
) {
  return httpHandler(route, run, { indexedRead: indexedRead() });
}
