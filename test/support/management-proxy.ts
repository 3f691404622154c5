import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One call to the management API as the proxy received it. */
export interface ManagementCall {
  method: string;
  path: string;
  body: string;
}

/** What the proxy does with a call: forward it to the stack, or answer it with an error as API Gateway would. */
export type Verdict = 'forward' | { status: number; type: string; headers?: Record<string, string> };

export interface ManagementProxy {
  url: string;
  close(): void;
}

/**
 * A proxy in front of the stack's management API (WEBSOCKET_MANAGEMENT_ENDPOINT),
 * as a team puts one there to record or throttle the fan-out's calls: each
 * call is `judge`d (a verdict that is a promise holds the call until it
 * settles), then forwarded unchanged to `target()` (the stack's URL, known
 * once it has started) or answered with the verdict's error.
 */
export async function managementProxy(target: () => string, judge: (call: ManagementCall) => Verdict | Promise<Verdict>): Promise<ManagementProxy> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const verdict = await judge({ method: request.method!, path: request.url!, body: body.toString() });
    if (verdict !== 'forward') {
      response.writeHead(verdict.status, { 'content-type': 'application/json', 'x-amzn-errortype': verdict.type, ...verdict.headers });
      response.end(JSON.stringify({ message: verdict.type }));
      return;
    }
    const upstream = httpRequest(
      `${target()}${request.url}`,
      { method: request.method, headers: { ...request.headers, host: new URL(target()).host } },
      (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    upstream.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A handshake's answer ("{}"): a connection's start, not an event. */
export const isHandshakeAnswer = (call: ManagementCall) => call.body === '{}\u001e';
