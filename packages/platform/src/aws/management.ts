import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { awsSettings } from '../config/aws';
import { keepAliveHandler } from './http';
import { DeadlineRetryStrategy } from './retry';
import { traceCalls } from './traced';

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

/**
 * The management API's settings. A post is not idempotent (a frame posted
 * twice reaches the browser twice), so a call is retried only when API
 * Gateway refused it (throttled: 429, after its Retry-After) or never saw it
 * (DNS, connection refused or not made); a timeout or a reset after sending
 * fails the post. DeleteConnection follows the same rule.
 */
export const managementSettings = {
  /** The SDK's default for this client. */
  maxAttempts: 3,
  /** The SDK's default base (@smithy/core's Retry.delay()); throttling waits on its own 1 s base. */
  baseDelayMs: 50,
  /** DNS and TCP to the regional endpoint take a few milliseconds. */
  connectionTimeoutMs: 300,
  /**
   * Tens of times a post's usual latency, TLS included (and room for the
   * local stack's gateway on a loaded machine); short enough that a post
   * throttled at once still gets its retry (a wait of up to 1 s, or the
   * Retry-After, and one more attempt) within the deadline.
   */
  requestTimeoutMs: 800,
  /**
   * A fan-out shard stops posting 2 s before its timeout
   * (limits.hub.shardDeadlineMarginMs): a post started just before then ends
   * within 1.9 s.
   */
  deadlineMs: 1_900,
  atMostOnce: true,
} as const;

/**
 * The client of one stage's management API (`https://{domain}/{stage}`),
 * sending through sockets of its own. `paced`: the caller's pacer retries
 * throttled posts (RetryPolicy.callerPaces).
 */
export function managementApiClient(endpoint: string, maxSockets = 64, { paced = false } = {}): ApiGatewayManagementApiClient {
  const { maxAttempts, requestTimeoutMs } = managementSettings;
  const client = new ApiGatewayManagementApiClient({
    region: awsSettings().AWS_REGION,
    endpoint,
    requestHandler: keepAliveHandler({ ...managementSettings, maxSockets }),
    maxAttempts,
    retryStrategy: new DeadlineRetryStrategy({ ...managementSettings, attemptTimeoutMs: requestTimeoutMs, callerPaces: paced }),
  });
  traceCalls(client, 'ApiGatewayManagementApi');
  return client;
}

const clients = new Map<string, ApiGatewayManagementApiClient>();

/**
 * One client per endpoint, lane and process, keeping its sockets alive
 * between calls. `maxSockets` is the caller's concurrency, so a post never
 * waits for a socket (the wait would count against its connection timeout).
 * A lane is a socket pool of its own, so posts in one (a buyer's
 * forgeFulfilled) never queue for sockets behind another's (a broadcast).
 */
export function managementClient(endpoint: string, maxSockets = 64, lane = 'default', { paced = false } = {}): ApiGatewayManagementApiClient {
  const key = `${endpoint} ${maxSockets} ${lane} ${paced}`;
  let client = clients.get(key);
  if (!client) {
    client = managementApiClient(endpoint, maxSockets, { paced });
    clients.set(key, client);
  }
  return client;
}

/** The management endpoint of the API a WebSocket event came through, unless configuration names one. */
export function managementEndpoint(requestContext: { domainName: string; stage: string }): string {
  return awsSettings().WEBSOCKET_MANAGEMENT_ENDPOINT ?? `https://${requestContext.domainName}/${requestContext.stage}`;
}

/** API Gateway no longer knows the connection (410). */
export const isGone = (error: unknown) => (error as { name?: string } | undefined)?.name === 'GoneException';

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
