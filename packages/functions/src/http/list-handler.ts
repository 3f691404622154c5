import { indexedBlock } from '../middleware/indexed-block';
import type { HttpContext, HttpEvent } from '../middleware/types';
import type { HttpRoute } from '../routes';
import { httpHandler, type RouteInput } from './handler';

/** A handler for a paged list of the indexer's data: its successes carry `X-Indexed-Block`. */
export function listHandler<R extends HttpRoute & { list: object }, T>(route: R, run: (input: RouteInput<R>, context: HttpContext, event: HttpEvent) => Promise<T>) {
  return httpHandler(route, run, { indexedBlock: indexedBlock() });
}
