import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '@hatchery/core/errors';
import { httpHandler } from '@hatchery/functions/http/handler';
import { requestLogger } from '@hatchery/functions/middleware/request-logger';
import { requestState } from '@hatchery/functions/middleware/request-state';
import type { HttpContext, HttpEvent, HttpResult } from '@hatchery/functions/middleware/types';
import type { HttpRoute } from '@hatchery/functions/routes';
import { lambdaContext } from '@hatchery/local/gateway/lambda';
import { addLogContext, logger, powertoolsLogger, useLogDestination } from '@hatchery/platform/telemetry/logger';
import { setEmfSink } from '@hatchery/platform/telemetry/metrics';
import { httpRequest, type HttpRequest } from './requests';

/**
 * A request's own log line (requestLogger), on Middy's request, read from
 * the logger's output at the default level: which requests have a line at
 * INFO, what it names, and that nothing of the caller's credentials is on it.
 */
let written: string;
let lines: Record<string, unknown>[];

beforeAll(() => {
  for (const name of ['LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL']) delete process.env[name];
  setEmfSink(() => undefined);
});
afterAll(() => setEmfSink(undefined));

beforeEach(() => {
  written = '';
  lines = [];
  useLogDestination({
    write: (line: string) => {
      written += line;
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
});
afterEach(() => {
  vi.useRealTimers();
  powertoolsLogger().setLogLevel('INFO');
});

const logged = () =>
  requestLogger<HttpEvent, HttpResult, HttpContext>({
    message: 'request',
    level: 'info',
    fields: (event) => ({ requestId: event.requestContext.requestId, route: event.routeKey }),
  });

/** One request through the logger: `before`, then `after` with `response`, or `onError` without one. */
async function run(response: HttpResult | undefined, { elapsedMs = 0, middleware = logged() } = {}): Promise<HttpRequest> {
  const request = httpRequest();
  vi.useFakeTimers({ toFake: ['performance'] });
  await middleware.before!(request);
  vi.advanceTimersByTime(elapsedMs);
  request.response = response;
  if (response) await middleware.after!(request);
  else await middleware.onError!(request);
  vi.useRealTimers();
  return request;
}

describe('requestLogger', () => {
  it('writes no line at the default level for a quick success: the metrics count it', async () => {
    await run({ statusCode: 200 });
    await run({ statusCode: 304 }, { elapsedMs: 999 });
    expect(lines).toEqual([]);
  });

  it('writes the line at its level for a refused or failed request, or one that took a second or more, with its status and duration', async () => {
    await run({ statusCode: 404 });
    await run({ statusCode: 503 });
    await run(undefined);
    await run({ statusCode: 200 }, { elapsedMs: 1_000 });
    expect(lines.map(({ level, message, status, durationMs }) => ({ level, message, status, durationMs }))).toEqual([
      { level: 'INFO', message: 'request', status: 404, durationMs: 0 },
      { level: 'INFO', message: 'request', status: 503, durationMs: 0 },
      { level: 'INFO', message: 'request', status: undefined, durationMs: 0 },
      { level: 'INFO', message: 'request', status: 200, durationMs: 1_000 },
    ]);
  });

  it('writes a quick success’s line at debug when debug lines are written (a sampled invocation)', async () => {
    powertoolsLogger().setLogLevel('DEBUG');
    await run({ statusCode: 200 });
    expect(lines).toEqual([expect.objectContaining({ level: 'DEBUG', message: 'request', status: 200 })]);
  });

  it("puts the request's fields on every line logged while it runs, and nothing of an invocation before it", async () => {
    addLogContext({ accountId: 'left-over', connectionId: 'left-over' });
    const request = httpRequest();
    await logged().before!(request);
    request.context.log.info('from the handler');
    logger().warn('from anywhere');
    const [handler, anywhere] = lines;
    for (const line of [handler, anywhere]) {
      expect(line).toMatchObject({ requestId: 'request-1', route: 'GET /editions' });
      expect(line).not.toHaveProperty('accountId');
      expect(line).not.toHaveProperty('connectionId');
    }
  });

  it('keeps each request’s start apart, however many run at once', async () => {
    const middleware = logged();
    vi.useFakeTimers({ toFake: ['performance'] });
    const slow = httpRequest();
    await middleware.before!(slow);
    vi.advanceTimersByTime(1_500);
    const quick = httpRequest();
    await middleware.before!(quick);
    vi.advanceTimersByTime(10);
    quick.response = { statusCode: 404 };
    slow.response = { statusCode: 404 };
    await middleware.after!(quick);
    await middleware.after!(slow);
    expect(lines.map((line) => line.durationMs)).toEqual([10, 1_510]);
  });
});

describe('the HTTP chain’s lines', () => {
  it('never hold the bearer token or a signature the request carried, whatever it answers', async () => {
    const route = {
      method: 'POST',
      path: '/refused',
      handler: 'packages/functions/src/http/refused.handler',
      auth: 'none',
      summary: 'A request that is refused.',
    } as const satisfies HttpRoute;
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
    const signature = `0x${'5e'.repeat(65)}`;
    const handler = httpHandler(route, async () => {
      throw new AppError('unauthorized', 'No.');
    });
    const event = httpRequest({
      routeKey: 'POST /refused',
      rawPath: '/refused',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ signature }),
    }).event;
    const result = (await handler(event, lambdaContext('refused') as HttpContext)) as HttpResult;
    expect(result.statusCode).toBe(401);
    expect(lines.map((line) => line.message)).toEqual(['request']);
    expect(lines[0]).toMatchObject({ level: 'INFO', requestId: 'request-1', route: 'POST /refused', status: 401 });
    for (const secret of [...token.split('.'), signature.slice(2)]) expect(written).not.toContain(secret);
  });
});

describe('requestState', () => {
  it("keeps a value per request, on the request's own internal store, apart from any other middleware's of the same name", () => {
    const mine = requestState<number>('start');
    const theirs = requestState<number>('start');
    const first = { internal: {} };
    const second = { internal: {} };
    mine.set(first, 1);
    theirs.set(first, 2);
    mine.set(second, 3);
    expect([mine.get(first), theirs.get(first), mine.get(second), theirs.get(second)]).toEqual([1, 2, 3, undefined]);
    // Under a symbol: nothing that walks the request's keys (a log of it, a JSON copy) sees it.
    expect(Object.keys(first.internal)).toEqual([]);
    expect(JSON.stringify(first.internal)).toBe('{}');
  });
});
