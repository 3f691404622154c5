import { finished } from 'node:stream';
import type { HttpRequest, HttpResponse } from '@smithy/core/protocols';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpHandlerOptions } from '@smithy/types';

/** How long one attempt of a call may take, and how many run at once. */
interface AttemptLimits {
  /** Until the socket is connected: DNS and TCP, and any wait for a free socket before them. */
  connectionTimeoutMs: number;
  /** The whole attempt, from handing it to the handler to the last byte of the answer's body. */
  requestTimeoutMs: number;
  /** Sockets open at once, each kept alive for the next call. */
  maxSockets: number;
}

/**
 * The handler's requestTimeout (@smithy/node-http-handler 4.x,
 * set-request-timeout.js) is cleared once the answer's headers arrive, and its
 * socketTimeout counts silence before the headers too, so it cannot be shorter
 * than the longest answer (a synchronous Lambda invoke's whole run): neither
 * bounds a body that stalls after its headers. This one ends such a body where
 * the attempt's own requestTimeout would have ended it, the way the handler's
 * socket timeout ends a response (destroying it with a TimeoutError), so the
 * deserializer fails the attempt and the retry strategy's arithmetic, which
 * counts one attempt as requestTimeout, holds.
 */
class WholeAttemptHandler extends NodeHttpHandler {
  constructor(
    private readonly attemptMs: number,
    options: ConstructorParameters<typeof NodeHttpHandler>[0],
  ) {
    super(options);
  }

  override async handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    const startedAt = performance.now();
    const answer = await super.handle(request, options);
    endBodyBy(answer.response.body, this.attemptMs - (performance.now() - startedAt), this.attemptMs);
    return answer;
  }
}

function endBodyBy(body: unknown, remainingMs: number, attemptMs: number): void {
  const stream = body as (NodeJS.ReadableStream & { destroy(error?: Error): void; readableEnded?: boolean; destroyed?: boolean }) | undefined;
  if (typeof stream?.destroy !== 'function' || stream.readableEnded || stream.destroyed) return;
  const timer = setTimeout(
    () =>
      stream.destroy(
        Object.assign(new Error(`The answer's body did not arrive within the attempt's ${attemptMs} ms request timeout.`), {
          name: 'TimeoutError',
          code: 'ETIMEDOUT',
        }),
      ),
    Math.max(0, remainingMs),
  );
  finished(stream, { readable: true, writable: false }, () => clearTimeout(timer));
}

/**
 * The SDK's Node.js HTTP/1.1 handler with keep-alive sockets and bounded
 * attempts, the answer's body included. A client that shares one handler
 * shares its sockets.
 */
export function keepAliveHandler({ connectionTimeoutMs, requestTimeoutMs, maxSockets }: AttemptLimits): NodeHttpHandler {
  const agent = { keepAlive: true, maxSockets };
  return new WholeAttemptHandler(requestTimeoutMs, {
    connectionTimeout: connectionTimeoutMs,
    requestTimeout: requestTimeoutMs,
    // Without it the handler only logs a warning once requestTimeout has passed, and the attempt waits on.
    throwOnRequestTimeout: true,
    httpAgent: agent,
    httpsAgent: agent,
  });
}
