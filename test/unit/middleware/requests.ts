import type { HttpContext, HttpEvent, HttpMiddleware, HttpResult } from '@hatchery/functions/middleware/types';

/** Middy's request as an HTTP chain's middlewares see it. */
export type HttpRequest = Parameters<NonNullable<HttpMiddleware['before']>>[0];

/** What a test sets of an event; headers are merged over a browser-less caller's. */
export interface EventParts extends Partial<Omit<HttpEvent, 'headers'>> {
  headers?: Record<string, string | undefined>;
}

/**
 * Middy's request for one HTTP API (payload 2.0) event of `GET /editions`,
 * with `parts` over it, before its handler has run (no response yet) unless
 * a response is given.
 */
export function httpRequest({ headers, ...parts }: EventParts = {}, response?: HttpResult): HttpRequest {
  const event = {
    version: '2.0',
    routeKey: 'GET /editions',
    rawPath: '/editions',
    rawQueryString: '',
    headers: { host: 'api.example.test', ...headers },
    requestContext: {
      requestId: 'request-1',
      routeKey: 'GET /editions',
      http: { method: 'GET', path: '/editions', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'probe' },
    },
    isBase64Encoded: false,
    ...parts,
  } as HttpEvent;
  return { event, context: {} as HttpContext, response, error: undefined, internal: {} };
}

/** Runs one phase of a middleware on `request`, resolving with what it threw (undefined when it let the request on). */
export async function thrownBy(phase: ((request: HttpRequest) => unknown) | undefined, request: HttpRequest): Promise<unknown> {
  try {
    await phase?.(request);
    return undefined;
  } catch (error) {
    return error;
  }
}
