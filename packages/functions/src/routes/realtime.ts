import type { HttpRoute } from '../routes';

/** HTTP routes of the realtime hub, e.g. POST /hubs/events/negotiate (issue: realtime). */
export const realtimeRoutes = {} as const satisfies Record<string, HttpRoute>;
