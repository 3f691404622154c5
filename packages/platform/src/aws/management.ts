import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { awsSettings } from '../config/aws';
import { deliveryDeadlines } from './deadlines';
import { keepAliveHandler } from './http';
import { DeadlineRetryStrategy, neverSent } from './retry';
import { isThrottled, retryAfterMs } from './throttling';
import { traceCalls } from './traced';

/**
 * Sending to hub connections through API Gateway's management API
 * (`/@connections/{id}`): the $default handler answers its caller this way and
 * the listener fans events out. Locally the endpoint is the local gateway.
 */
export interface HubConnections {
  /**
   * 'gone' when API Gateway no longer knows the connection; a Refusal when it
   * certainly did not deliver (throttled, or never reached), which the caller
   * may try again without risking a second frame. Any other failure throws:
   * the frame may have gone out.
   */
  post(connectionId: string, data: string | Uint8Array): Promise<'sent' | 'gone' | Refusal>;
  close(connectionId: string): Promise<void>;
}

/** A post API Gateway did not apply: throttled (429, with its Retry-After if any), or never sent. */
interface Refusal {
  refused: 'throttled' | 'unsent';
  retryAfterMs?: number;
  error: unknown;
}

/**
 * The one reading of a management API failure that the fan-out acts on: only
 * API Gateway's own 429 slows the posts, and only a failure that proves the
 * post was not applied may be tried again.
 */
export function refusalOf(error: unknown): Refusal | undefined {
  if (isThrottled(error)) return { refused: 'throttled', retryAfterMs: retryAfterMs(error), error };
  if (neverSent(error)) return { refused: 'unsent', error };
  return undefined;
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
  deadlineMs: deliveryDeadlines.managementCallMs,
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
 * between calls. A lane is a socket pool of its own, so posts in one (a
 * buyer's forgeFulfilled) never queue for sockets behind another's (a
 * broadcast).
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

const lanes = new Map<string, HubConnections>();

/**
 * The posts of one lane: its client's sockets, and at most that many posts in
 * flight, so a post waits for a free socket before the SDK starts its
 * connection timeout (which would count the wait and fail a post never sent).
 * Paced: the fan-out's pacer retries throttled posts itself.
 */
export function managementConnections(endpoint: string, sockets: number, lane: string): HubConnections {
  const key = `${endpoint} ${sockets} ${lane}`;
  let connections = lanes.get(key);
  if (!connections) {
    connections = hubConnections(managementClient(endpoint, sockets, lane, { paced: true }), sockets);
    lanes.set(key, connections);
  }
  return connections;
}

/** The management endpoint of the API a WebSocket event came through, unless configuration names one. */
export function managementEndpoint(requestContext: { domainName: string; stage: string }): string {
  return awsSettings().WEBSOCKET_MANAGEMENT_ENDPOINT ?? `https://${requestContext.domainName}/${requestContext.stage}`;
}

/** API Gateway no longer knows the connection (410). */
const isGone = (error: unknown) => (error as { name?: string } | undefined)?.name === 'GoneException';

/** Posts and closes through `client`, with at most `inFlight` calls at once (the rest wait their turn here). */
export function hubConnections(client: ApiGatewayManagementApiClient, inFlight = Number.POSITIVE_INFINITY): HubConnections {
  const encoder = new TextEncoder();
  const turn = turns(inFlight);
  return {
    async post(connectionId, data) {
      await turn.take();
      try {
        await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: typeof data === 'string' ? encoder.encode(data) : data }));
        return 'sent';
      } catch (error) {
        if (isGone(error)) return 'gone';
        const refusal = refusalOf(error);
        if (refusal) return refusal;
        throw error;
      } finally {
        turn.give();
      }
    },
    async close(connectionId) {
      await turn.take();
      try {
        await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
      } catch (error) {
        if (!isGone(error)) throw error;
      } finally {
        turn.give();
      }
    },
  };
}

/** A counting semaphore: `take` resolves once fewer than `size` holders remain. */
function turns(size: number) {
  let held = 0;
  const waiting: Array<() => void> = [];
  return {
    async take(): Promise<void> {
      if (held < size) {
        held++;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else held--;
    },
  };
}
