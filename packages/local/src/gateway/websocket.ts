import { randomBytes, randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { AppError, toProblem } from '@hatchery/core/errors';
import { securityHeaders } from '@hatchery/functions/middleware/security-headers';
import { logger } from '@hatchery/platform/telemetry/logger';
import type { WsEvent, WsResult, WsRoute } from '@hatchery/functions/routes/realtime';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';
import { lambdaContext, loadHandler } from './lambda';
import { throttledBody, type AccountQuota } from './quota';
import { requestTime } from './request-time';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

/** A client connected to the local WebSocket API; the management API reads these. */
export interface LiveConnection {
  id: string;
  socket: WebSocket;
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  userAgent: string;
}

export interface WebSocketApi {
  /** For GatewayOptions.onUpgrade. */
  onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  connections: ReadonlyMap<string, LiveConnection>;
  /** Closes every connection and waits for their $disconnect handlers. */
  close(): Promise<void>;
}

type RouteKey = WsRoute['routeKey'];
type Identity = Pick<LiveConnection, 'id' | 'connectedAt' | 'sourceIp' | 'userAgent'> & { domainName: string };

/** API Gateway's connection ids: 16 characters of base64, often ending in `=`, so they need encoding in a URL. */
const newConnectionId = () => `${randomBytes(11).toString('base64').slice(0, 15)}=`;

function requestContext(connection: Identity, routeKey: RouteKey, stage: string, apiId: string): WsEvent['requestContext'] {
  const now = Date.now();
  const eventType = ({ $connect: 'CONNECT', $disconnect: 'DISCONNECT', $default: 'MESSAGE' } as const)[routeKey];
  return {
    routeKey,
    eventType,
    ...(eventType === 'MESSAGE' && { messageId: randomBytes(8).toString('base64url') }),
    extendedRequestId: randomBytes(8).toString('base64url'),
    requestTime: requestTime(now),
    messageDirection: 'IN',
    stage,
    connectedAt: connection.connectedAt,
    requestTimeEpoch: now,
    identity: { sourceIp: connection.sourceIp, userAgent: connection.userAgent },
    requestId: randomUUID(),
    domainName: connection.domainName,
    connectionId: connection.id,
    apiId,
  };
}

/** The $connect event's headers as API Gateway passes them: the client's own capitalisation, plus its forwarding headers. */
function connectHeaders(request: IncomingMessage, sourceIp: string) {
  const multi: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) (multi[request.rawHeaders[i]!] ??= []).push(request.rawHeaders[i + 1]!);
  multi['X-Forwarded-For'] = [sourceIp];
  multi['X-Forwarded-Proto'] = ['http'];
  const single = Object.fromEntries(Object.entries(multi).map(([name, values]) => [name, values.join(',')]));
  return { headers: single, multiValueHeaders: multi };
}

function queryParameters(url: URL) {
  const multi: Record<string, string[]> = {};
  for (const [key, value] of url.searchParams) (multi[key] ??= []).push(value);
  if (!Object.keys(multi).length) return {};
  return {
    queryStringParameters: Object.fromEntries(Object.entries(multi).map(([key, values]) => [key, values.at(-1)!])),
    multiValueQueryStringParameters: multi,
  };
}

/** Answers an upgrade request with a plain HTTP response and drops the socket, as API Gateway does for a refused $connect. */
function refuse(socket: Duplex, status: number, headers: Record<string, string> = {}, body = ''): void {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

function refuseWithProblem(socket: Duplex, error: AppError, instance: string): void {
  const problem = toProblem(error, instance);
  refuse(socket, problem.status, { ...problem.headers, ...securityHeaders }, JSON.stringify(problem.body));
}

const isSuccess = (result: unknown): boolean => {
  const status = typeof result === 'object' && result !== null && 'statusCode' in result ? Number((result as WsResult).statusCode) : 200;
  return status >= 200 && status < 300;
};

/**
 * The WebSocket side of the local API Gateway: `path` accepts upgrades and
 * drives the same $connect/$disconnect/$default handlers with the WebSocket
 * API's event shapes, with its quotas (128 KB messages, 10 minutes idle,
 * 2 hours in all). Messages of one connection are handled one after another.
 */
export function websocketApi(options: { path: string; routes: readonly WsRoute[]; stage?: string; apiId?: string; quota?: AccountQuota }): WebSocketApi {
  const stage = options.stage ?? '$default';
  const apiId = options.apiId ?? 'local';
  const log = logger().child({ component: 'websocket-api' });
  const server = new WebSocketServer({ noServer: true, maxPayload: webSocketApiQuotas.messageBytes, perMessageDeflate: false });
  const live = new Map<string, LiveConnection>();
  const queues = new Map<string, Promise<void>>();

  async function invoke(routeKey: RouteKey, event: WsEvent): Promise<unknown> {
    const route = options.routes.find((candidate) => candidate.routeKey === routeKey);
    if (!route) return { statusCode: 200 };
    const handler = await loadHandler(route.handler);
    return handler(event, lambdaContext(routeKey, functionTimeoutSeconds.hub * 1000));
  }

  /** A route with a route response sends the body its function returned back to the caller, as API Gateway does. */
  const answersInPlace = new Set(options.routes.filter((route) => route.answersInPlace).map((route) => route.routeKey));
  function answer(id: string, routeKey: RouteKey, result: unknown): void {
    if (!answersInPlace.has(routeKey)) return;
    const body = typeof result === 'object' && result !== null ? (result as WsResult).body : undefined;
    const socket = live.get(id)?.socket;
    if (typeof body === 'string' && body !== '' && socket && socket.readyState === socket.OPEN) socket.send(body);
  }

  /** Runs a connection's events in arrival order; the last one ($disconnect) leaves nothing queued. */
  function enqueue(id: string, routeKey: RouteKey, event: WsEvent): void {
    const next = (queues.get(id) ?? Promise.resolve())
      .then(() => invoke(routeKey, event))
      .then(
        (result) => answer(id, routeKey, result),
        (error: unknown) => log.error({ err: error, routeKey, connectionId: id }, 'websocket handler failed'),
      );
    queues.set(id, next);
    if (routeKey === '$disconnect') void next.then(() => queues.get(id) === next && queues.delete(id));
  }

  /** A $disconnect for the connection, once however many ways its end is noticed. */
  function disconnecter(identity: Identity): (code: number, reason: string) => void {
    let delivered = false;
    return (code, reason) => {
      if (delivered) return;
      delivered = true;
      const context = { ...requestContext(identity, '$disconnect', stage, apiId), disconnectStatusCode: code, disconnectReason: reason };
      enqueue(identity.id, '$disconnect', { requestContext: context, isBase64Encoded: false });
    };
  }

  function open(identity: Identity, socket: WebSocket, disconnect: (code: number, reason: string) => void): void {
    const connection: LiveConnection = { ...identity, socket, lastActiveAt: identity.connectedAt };
    live.set(identity.id, connection);
    const idle = setTimeout(() => socket.close(1001, 'Going away'), webSocketApiQuotas.idleTimeoutMs).unref();
    const lifetime = setTimeout(() => socket.close(1001, 'Going away'), webSocketApiQuotas.connectionLifetimeMs).unref();
    socket.on('message', (data: RawData, isBinary: boolean) => {
      connection.lastActiveAt = Date.now();
      idle.refresh();
      // Over the account's throttle a message reaches no route; the client is told so in a frame of the gateway's own.
      if (options.quota && !options.quota.take('message')) {
        socket.send(JSON.stringify({ message: 'Too many requests', connectionId: identity.id, requestId: randomUUID() }));
        return;
      }
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      enqueue(identity.id, '$default', {
        requestContext: requestContext(identity, '$default', stage, apiId),
        body: isBinary ? bytes.toString('base64') : bytes.toString('utf8'),
        isBase64Encoded: isBinary,
      });
    });
    socket.on('error', (error) => log.debug({ err: error.message, connectionId: identity.id }, 'websocket error'));
    socket.on('close', (code: number, reason: Buffer) => {
      clearTimeout(idle);
      clearTimeout(lifetime);
      live.delete(identity.id);
      disconnect(code, reason.toString('utf8'));
    });
  }

  async function connect(request: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const sourceIp = request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
    const identity: Identity = {
      id: newConnectionId(),
      connectedAt: Date.now(),
      sourceIp,
      userAgent: request.headers['user-agent'] ?? '',
      domainName: request.headers.host ?? '127.0.0.1',
    };
    const event: WsEvent = {
      ...connectHeaders(request, sourceIp),
      ...queryParameters(url),
      requestContext: requestContext(identity, '$connect', stage, apiId),
      isBase64Encoded: false,
    };
    let result: unknown;
    try {
      result = await invoke('$connect', event);
    } catch (error) {
      log.error({ err: error }, '$connect handler failed');
      refuseWithProblem(socket, new AppError('internal', 'The connection could not be accepted.'), url.pathname);
      return;
    }
    if (!isSuccess(result)) {
      const { statusCode, headers, body } = result as WsResult;
      refuse(socket, statusCode, headers, body);
      return;
    }
    // From here API Gateway reports a $disconnect whatever happens, also when the client gave up while $connect ran
    // (closed, or only half-closed, which the upgrade then drops without a word).
    const disconnect = disconnecter(identity);
    const abandoned = () => disconnect(1006, '');
    if (socket.destroyed) {
      abandoned();
      return;
    }
    socket.once('close', abandoned);
    server.handleUpgrade(request, socket, head, (webSocket) => {
      socket.off('close', abandoned);
      open(identity, webSocket, disconnect);
    });
  }

  return {
    connections: live,
    onUpgrade(request, socket, head) {
      socket.on('error', () => socket.destroy());
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== options.path) {
        refuseWithProblem(socket, new AppError('notFound', 'No WebSocket endpoint at this path.'), url.pathname);
        return;
      }
      if (options.quota && !options.quota.take('connect')) {
        refuse(socket, 429, { 'Content-Type': 'application/json' }, throttledBody);
        return;
      }
      void connect(request, socket, head, url);
    },
    async close() {
      const closed = [...live.values()].map((connection) => new Promise((resolve) => connection.socket.once('close', resolve)));
      for (const connection of live.values()) connection.socket.close(1001, 'Going away');
      // A peer that does not answer the close handshake is dropped rather than waited for.
      const drop = setTimeout(() => live.forEach((connection) => connection.socket.terminate()), 100);
      await Promise.all(closed);
      clearTimeout(drop);
      await Promise.all(queues.values());
      server.close();
    },
  };
}
