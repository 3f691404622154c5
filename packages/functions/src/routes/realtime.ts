import type { APIGatewayEventWebsocketRequestContextV2 } from 'aws-lambda';
import { negotiateQuerySchema } from '@hatchery/platform/signalr/protocol';
import type { HttpRoute } from '../http-route';

export const negotiateHub = {
  method: 'POST',
  path: '/hubs/events/negotiate',
  handler: 'packages/functions/src/http/negotiate-hub.handler',
  auth: 'none',
  summary:
    'SignalR negotiation for the realtime hub: connect to /hubs/events?id=<connectionToken> over WebSocket and speak the JSON hub protocol v1. ' +
    'Methods Subscribe(address) and Unsubscribe(address); events marketChanged { count, maxBlock } to everyone and forgeFulfilled { requestId, tokenId, editionId } to the buyer’s group.',
  request: { query: negotiateQuerySchema },
  // The hub's rule: pages of other origins are refused here as on the WebSocket.
  refusesOtherOrigins: true,
} as const satisfies HttpRoute;

/** HTTP routes of the realtime hub. */
export const realtimeRoutes = { negotiateHub } as const satisfies Record<string, HttpRoute>;

/** The WebSocket API's routes (API Gateway route keys), for the local gateway and infra/websocket.ts. */
export interface WsRoute {
  routeKey: '$connect' | '$disconnect' | '$default';
  handler: `packages/functions/src/${string}.handler`;
  /**
   * The route has a route response ("two-way communication"): the body the
   * function returns goes back to the caller, with no management API call.
   * infra/hub.ts creates it; the local gateway sends the body the same way.
   */
  answersInPlace?: true;
}

export const wsRoutes = [
  { routeKey: '$connect', handler: 'packages/functions/src/ws/connect.handler' },
  { routeKey: '$disconnect', handler: 'packages/functions/src/ws/disconnect.handler' },
  { routeKey: '$default', handler: 'packages/functions/src/ws/default.handler', answersInPlace: true },
] as const satisfies readonly WsRoute[];

/** The fan-out function, invoked by the listener once per connection shard of a broadcast, waiting for its answer (infra and the local stack). */
export const fanOutHandler = 'packages/functions/src/fanout/shard.handler';

/** Where the hub is served, on the local gateway and behind the router in AWS. */
export const hubPath = '/hubs/events';

/**
 * The event API Gateway's WebSocket API sends its Lambdas. @types/aws-lambda
 * leaves out what only some routes carry: headers and the query string on
 * $connect, the close code and reason on $disconnect.
 */
export interface WsEvent {
  requestContext: Omit<APIGatewayEventWebsocketRequestContextV2, 'messageId'> & {
    /** Only on messages ($default). */
    messageId?: string;
    identity: { sourceIp: string; userAgent?: string };
    disconnectStatusCode?: number;
    disconnectReason?: string;
  };
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  queryStringParameters?: Record<string, string>;
  multiValueQueryStringParameters?: Record<string, string[]>;
  body?: string;
  isBase64Encoded: boolean;
}

/** A WebSocket route's answer: on $connect a non-2xx status refuses the connection. */
export interface WsResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
}
