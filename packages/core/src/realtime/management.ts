import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { config } from '../config';
import { traceAwsClient } from '../tracing';

/**
 * Sending to hub connections through API Gateway's management API
 * (`/@connections/{id}`): the $default handler answers its caller this way and
 * the listener fans events out. Locally the endpoint is the local gateway.
 */
export interface HubConnections {
  /** 'gone' when API Gateway no longer knows the connection. */
  post(connectionId: string, data: string | Uint8Array): Promise<'sent' | 'gone'>;
  close(connectionId: string): Promise<void>;
}

const clients = new Map<string, ApiGatewayManagementApiClient>();

/**
 * Middleware a fan-out does not need, removed because the listener sends the
 * same command thousands of times per event (together about 15% of a
 * fan-out's CPU): the user agent and recursion-detection headers, and the
 * logging of each call (to the client's logger, which is a no-op anyway).
 * Serialization, the host header, content length, retries and SigV4 signing stay.
 */
const unneededMiddleware = ['getUserAgentMiddleware', 'recursionDetectionMiddleware', 'loggerMiddleware'];

/**
 * One client per endpoint, lane and process, keeping its sockets alive
 * between calls. A lane is a socket pool of its own, so posts in one (a
 * buyer's forgeFulfilled) never queue for sockets behind another's (a broadcast).
 */
export function managementClient(endpoint: string, maxSockets = 64, lane = 'default'): ApiGatewayManagementApiClient {
  const key = `${endpoint} ${maxSockets} ${lane}`;
  let client = clients.get(key);
  if (!client) {
    client = new ApiGatewayManagementApiClient({
      endpoint,
      region: config().AWS_REGION,
      maxAttempts: 3,
      // The same command is sent thousands of times per event: resolving its middleware once saves about 15% of a fan-out.
      cacheMiddleware: true,
      requestHandler: { httpAgent: { keepAlive: true, maxSockets }, httpsAgent: { keepAlive: true, maxSockets } },
    });
    for (const name of unneededMiddleware) client.middlewareStack.remove(name);
    clients.set(key, traceAwsClient(client));
  }
  return client;
}

/** The management endpoint of the API a WebSocket event came through, unless configuration names one. */
export function managementEndpoint(requestContext: { domainName: string; stage: string }): string {
  return config().WEBSOCKET_MANAGEMENT_ENDPOINT ?? `https://${requestContext.domainName}/${requestContext.stage}`;
}

export const isGone = (error: unknown) => error instanceof GoneException || (error as { name?: string } | undefined)?.name === 'GoneException';

export function hubConnections(client: ApiGatewayManagementApiClient): HubConnections {
  const encoder = new TextEncoder();
  return {
    async post(connectionId, data) {
      try {
        await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: typeof data === 'string' ? encoder.encode(data) : data }));
        return 'sent';
      } catch (error) {
        if (isGone(error)) return 'gone';
        throw error;
      }
    },
    async close(connectionId) {
      try {
        await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    },
  };
}
