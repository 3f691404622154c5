import type { HttpRoute } from '../routes';

/** HTTP routes of the realtime hub (issue: realtime). */
export const realtimeRoutes = {
  negotiateHub: {
    method: 'POST',
    path: '/hubs/events/negotiate',
    handler: 'packages/functions/src/http/negotiate-hub.handler',
    auth: 'none',
    summary: 'SignalR negotiation for the realtime hub at /hubs/events.',
  },
} as const satisfies Record<string, HttpRoute>;

/** The WebSocket API's routes (API Gateway route keys), for the local gateway and infra/websocket.ts. */
export interface WsRoute {
  routeKey: '$connect' | '$disconnect' | '$default';
  handler: `packages/functions/src/${string}.handler`;
}

export const wsRoutes = [
  { routeKey: '$connect', handler: 'packages/functions/src/ws/connect.handler' },
  { routeKey: '$disconnect', handler: 'packages/functions/src/ws/disconnect.handler' },
  { routeKey: '$default', handler: 'packages/functions/src/ws/default.handler' },
] as const satisfies readonly WsRoute[];

/** Where the hub is served, on the local gateway and behind the router in AWS. */
export const hubPath = '/hubs/events';
