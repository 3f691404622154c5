import { eventQuerySchema } from '@hatchery/core/events/query';
import type { HttpRoute } from '../http-route';

export const listEvents = {
  method: 'GET',
  path: '/events',
  handler: 'packages/functions/src/http/list-events.handler',
  auth: 'none',
  summary:
    'The event log for the game’s servers, paged by cursor from a position: fulfilments, sales, listings opened and closed, NFT transfers, and the retraction of any a reorg removed. 410 when the cursor’s events are past retention.',
  request: { query: eventQuerySchema },
  problems: [410, 503],
  // A reader polls with its cursor for what is new: a cache's copy would hold it back.
  cacheControl: 'no-store',
} as const satisfies HttpRoute;

/** Routes for the game's own servers. */
export const eventRoutes = { listEvents } as const satisfies Record<string, HttpRoute>;
