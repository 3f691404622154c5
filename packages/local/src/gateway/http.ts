import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { toProblem, AppError } from '@hatchery/core/errors';
import { securityHeaders } from '@hatchery/functions/middleware/security-headers';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';
import type { HttpRoute } from '@hatchery/functions/routes';
import { lambdaContext, loadedHandler, loadHandler } from './lambda';
import { requestTime } from './request-time';
import { createRouter, type MatchedRoute } from './routing';

/** HTTP API's payload limit is 10 MB; the local gateway keeps a much smaller one since no route takes large bodies. */
const maxBodyBytes = 1024 * 1024;
const textualContent = /^(application\/(json|problem\+json|x-www-form-urlencoded|xml)|text\/)/i;

/**
 * HTTP/1.1 (RFC 9112 §6.3): a request with neither Content-Length nor Transfer-Encoding has no body. Read from the
 * raw pairs: Node's `headers` is built on first use, a second copy of what toEventV2 builds.
 */
function announcesBody(raw: readonly string[]): boolean {
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding') return true;
  }
  return false;
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new AppError('payloadTooLarge', `The request body is larger than ${maxBodyBytes} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

/** Builds the payload format 2.0 event API Gateway's HTTP API would send. */
export function toEventV2(request: IncomingMessage, url: URL, matched: MatchedRoute, body: Buffer | undefined): APIGatewayProxyEventV2 {
  // Every repeated header joined with a bare comma, as payload 2.0 does; Node's `headers` would keep only the first of some
  // (authorization among them). Read from the raw pairs in one pass: `headersDistinct` makes an array per header first.
  const headers: Record<string, string> = {};
  const cookieHeaders: string[] = [];
  const raw = request.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    const value = raw[index + 1]!;
    if (name === 'cookie') {
      cookieHeaders.push(value);
      continue;
    }
    if (Object.hasOwn(headers, name)) headers[name] += `,${value}`;
    // Assigned, `__proto__` would set the object's prototype instead of becoming a header.
    else if (name === '__proto__') Object.defineProperty(headers, name, { value, writable: true, enumerable: true, configurable: true });
    else headers[name] = value;
  }
  // A Map, then fromEntries: every name (`constructor`, `__proto__`) becomes an own property, as in API Gateway's JSON event.
  const path = url.pathname;
  const search = url.search;
  const repeated = new Map<string, string>();
  if (search) for (const [key, value] of url.searchParams) repeated.set(key, repeated.has(key) ? `${repeated.get(key)},${value}` : value);
  const query: Record<string, string> = Object.fromEntries(repeated);
  const cookies = cookieHeaders.length
    ? cookieHeaders
        .join(';')
        .split(';')
        .map((cookie) => cookie.trim())
        .filter(Boolean)
    : undefined;
  const textual = body === undefined || textualContent.test(headers['content-type'] ?? 'application/json');
  const now = Date.now();
  const remote = request.socket.remoteAddress;
  const sourceIp = remote === undefined ? '127.0.0.1' : remote.startsWith('::ffff:') ? remote.slice(7) : remote;
  return {
    version: '2.0',
    routeKey: matched.routeKey,
    rawPath: path,
    rawQueryString: search.slice(1),
    cookies,
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: matched.pathParameters,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: (headers.host ?? '127').split('.')[0]!,
      http: {
        method: request.method ?? 'GET',
        path,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: matched.routeKey,
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now,
    },
    body: body === undefined ? undefined : textual ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body !== undefined && !textual,
  };
}

/** Statuses whose answer has no body, and so no Content-Length from the gateway (RFC 9110 §8.6). */
const bodiless = (status: number, method: string | undefined) => method === 'HEAD' || status === 204 || status === 304 || status < 200;

/**
 * Applies the 2.0 response rules: a structured result as given; anything else is JSON with status 200. The
 * body gets its Content-Length, as API Gateway gives it (a head written without one would send it chunked), in
 * place of any the handler set. The head goes to writeHead as one list of pairs: Node's setHeader keeps a pair
 * array and a dictionary per response for the same head.
 */
function writeResultV2(response: ServerResponse, result: unknown): void {
  const structured =
    typeof result === 'object' && result !== null && 'statusCode' in result
      ? (result as APIGatewayProxyStructuredResultV2)
      : { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(result) };
  const status = structured.statusCode ?? 200;
  const body = structured.body === undefined ? '' : structured.isBase64Encoded ? Buffer.from(structured.body, 'base64') : structured.body;
  const headers = structured.headers ?? {};
  const head: string[] = [];
  let typed = false;
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-length') continue;
    if (lower === 'content-type') typed = true;
    head.push(name, String(headers[name]));
  }
  if (structured.cookies) for (const cookie of structured.cookies) head.push('set-cookie', cookie);
  if (!typed) head.push('content-type', 'application/json');
  if (!bodiless(status, response.req?.method)) head.push('content-length', String(Buffer.byteLength(body)));
  response.writeHead(status, head);
  response.end(body);
}

/** The gateway's own answers (no route, throttled, Lambda failing); they carry the security headers too, as every response of the service does. */
export function writeProblem(response: ServerResponse, error: unknown, instance: string): void {
  const problem = toProblem(error, instance);
  response.writeHead(problem.status, { ...problem.headers, ...securityHeaders });
  response.end(JSON.stringify(problem.body));
}

/** The HTTP side of the local API Gateway: every route of the table, invoking the real handlers in-process. */
export function httpApi(routes: readonly HttpRoute[]) {
  const route = createRouter(routes);
  return async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    const matched = route(request.method ?? 'GET', path);
    if (!matched) {
      writeProblem(response, new AppError('notFound', 'No route matches this method and path.'), path);
      return;
    }
    try {
      const body = announcesBody(request.rawHeaders) ? await readBody(request) : undefined;
      const event = toEventV2(request, url, matched, body);
      const handler = loadedHandler(matched.route.handler) ?? (await loadHandler(matched.route.handler));
      const result = await handler(event, lambdaContext(matched.routeKey, functionTimeoutSeconds.http * 1000));
      writeResultV2(response, result);
    } catch (error) {
      // Lambda itself failing (not the handler's own problem+json) is API Gateway's 500.
      writeProblem(response, error, path);
    }
  };
}
