import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '@hatchery/core/errors';
import type { HttpRoute } from '@hatchery/functions/routes';
import { httpApi, writeProblem } from './http';
import { ipRateLimiter } from './ip-rate-limit';
import { writeThrottledHttp, type AccountQuota } from './quota';

/** A path prefix the gateway serves itself rather than through a Lambda (JWKS, the management API). */
export type LocalEndpoint = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void> | void;

interface GatewayOptions {
  routes: readonly HttpRoute[];
  host?: string;
  port: number;
  ipRequestsPerSecond: number;
  localEndpoints?: Record<string, LocalEndpoint>;
  /**
   * Until this answers true, API and hub requests get 503 with Retry-After
   * (the stack is still migrating and loading data); local endpoints are served.
   */
  isReady?: () => boolean;
  /** The account's throttle, which every HTTP API request spends; the hub (websocket.ts) and the management API (management.ts) spend it too. */
  quota?: AccountQuota;
  /** The WebSocket side: takes over upgrade requests (see websocket.ts). */
  onUpgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export interface RunningGateway {
  server: Server;
  url: string;
  close(): Promise<void>;
}

const startingRetryAfterSeconds = 1;
const starting = () =>
  new AppError('unavailable', 'Hatchery is starting; try again in a moment.', undefined, { 'retry-after': String(startingRetryAfterSeconds) });

/** The local API Gateway: one port for the HTTP API, the hub and the management API, as the router gives in AWS. */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const api = httpApi(options.routes);
  const limit = ipRateLimiter(options.ipRequestsPerSecond);
  const endpoints = Object.entries(options.localEndpoints ?? {}).map(([prefix, serve]) => ({ prefix, below: `${prefix}/`, serve }));
  const isReady = options.isReady ?? (() => true);
  // Literal paths only: no route with a path parameter is exempt.
  const unlimited = new Set(options.routes.filter((route) => route.ipRateLimited === false).map((route) => `${route.method} ${route.path}`));
  const server = createServer((request, response) => {
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://localhost');
    } catch {
      // An absolute-form target that is no URL (`GET http://[ HTTP/1.1`) matches no route; thrown here, it would end the process.
      writeProblem(response, new AppError('notFound', 'No route matches this method and path.'), '/');
      return;
    }
    // Each read of a URL's part slices its text anew.
    const path = url.pathname;
    const endpoint = endpoints.find(({ prefix, below }) => path === prefix || path.startsWith(below));
    if (endpoint) {
      Promise.resolve(endpoint.serve(request, response, url)).catch((error) => writeProblem(response, error, path));
      return;
    }
    if (!isReady()) {
      writeProblem(response, starting(), path);
      return;
    }
    if (options.quota && !options.quota.take('http')) {
      request.resume();
      writeThrottledHttp(response);
      return;
    }
    const verdict = unlimited.has(`${request.method} ${path}`) ? { allowed: true as const } : limit(request.socket.remoteAddress ?? '');
    if (!verdict.allowed) {
      const error = new AppError('rateLimited', 'Too many requests from this address.', undefined, { 'retry-after': String(verdict.retryAfterSeconds) });
      writeProblem(response, error, path);
      return;
    }
    void api(request, response, url);
  });
  server.keepAliveTimeout = 65_000;
  const onUpgrade = options.onUpgrade;
  if (onUpgrade) {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (isReady()) return onUpgrade(request, socket, head);
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${startingRetryAfterSeconds}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
  } else server.on('upgrade', (_request, socket) => socket.destroy());
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
