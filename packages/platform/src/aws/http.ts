import { NodeHttpHandler } from '@smithy/node-http-handler';

/** How long one attempt of a call may take, and how many run at once. */
export interface AttemptLimits {
  /** Until the socket is connected: DNS and TCP, and any wait for a free socket before them. */
  connectionTimeoutMs: number;
  /** The whole attempt, from handing it to the handler to the response's headers. */
  requestTimeoutMs: number;
  /** Sockets open at once, each kept alive for the next call. */
  maxSockets: number;
}

/**
 * The SDK's Node.js HTTP/1.1 handler with keep-alive sockets and bounded
 * attempts. A client that shares one handler shares its sockets.
 */
export function keepAliveHandler({ connectionTimeoutMs, requestTimeoutMs, maxSockets }: AttemptLimits): NodeHttpHandler {
  const agent = { keepAlive: true, maxSockets };
  return new NodeHttpHandler({
    connectionTimeout: connectionTimeoutMs,
    requestTimeout: requestTimeoutMs,
    // Without it the handler only logs a warning once requestTimeout has passed, and the attempt waits on.
    throwOnRequestTimeout: true,
    httpAgent: agent,
    httpsAgent: agent,
  });
}
