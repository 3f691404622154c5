import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpHandler } from '@hatchery/functions/http/handler';
import type { HttpContext, HttpEvent, HttpResult } from '@hatchery/functions/middleware/types';
import type { HttpRoute } from '@hatchery/functions/routes';
import { slackMs, timed } from '../../support/pace';

const route = {
  method: 'GET',
  path: '/slow',
  handler: 'packages/functions/src/http/slow.handler',
  auth: 'none',
  summary: 'A read that never ends.',
} as const satisfies HttpRoute;

const event = {
  version: '2.0',
  routeKey: 'GET /slow',
  rawPath: '/slow',
  rawQueryString: '',
  headers: {},
  requestContext: {
    requestId: 'request',
    routeKey: 'GET /slow',
    http: { method: 'GET', path: '/slow', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' },
  },
  isBase64Encoded: false,
} as unknown as HttpEvent;

/** A Lambda context whose deadline is `remainingMs` away. */
function contextWithin(remainingMs: number): HttpContext & Context {
  const deadline = Date.now() + remainingMs;
  return {
    functionName: 'slow',
    awsRequestId: 'invocation',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  } as unknown as HttpContext & Context;
}

describe('an HTTP function near its deadline', () => {
  it('answers 503 with Retry-After through the chain as its deadline nears, rather than waiting for Lambda to end it', async () => {
    const handler = httpHandler(route, () => new Promise<never>(() => undefined));
    const remainingMs = 200;
    const { value, ms, lagMs } = await timed(() => handler(event, contextWithin(remainingMs)));
    const result = value as HttpResult & { body: string };
    // Middy answers 5 ms before the deadline, on a timer that runs as late as the machine's lag makes it.
    expect(ms).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThan(remainingMs + slackMs({ lagMs }));
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['retry-after']).toBe('5');
    expect(result.headers?.['content-type']).toBe('application/problem+json');
    expect(JSON.parse(result.body)).toMatchObject({ status: 503, title: 'Service unavailable', instance: '/slow' });
  });

  it('leaves a read that ends in time alone', async () => {
    const handler = httpHandler(route, async () => ({ answered: true }));
    const result = (await handler(event, contextWithin(2_000))) as HttpResult & { body: string };
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toEqual({ answered: true });
  });
});
