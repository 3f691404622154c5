import { beforeEach, describe, expect, it } from 'vitest';
import { AppError, unavailableRetryAfterSeconds } from '@hatchery/core/errors';
import { entityTag, httpCaching, privateCacheControl, publicCacheControl } from '@hatchery/functions/middleware/http-caching';
import { problemDetails } from '@hatchery/functions/middleware/problem-details';
import type { HttpContext, HttpEvent, HttpResult } from '@hatchery/functions/middleware/types';
import { logger, useLogDestination } from '@hatchery/platform/telemetry/logger';
import { httpRequest, type HttpRequest } from './requests';

/** What a request answers once the chain's last middlewares have run: its problem, or its cache headers. */
let written: string;
let lines: Record<string, unknown>[];
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

describe('problemDetails', () => {
  /** The response problemDetails makes of `error` on a request to `path`, and what it logged. */
  async function problemOf(error: unknown, { path = '/accounts/me', withLog = true } = {}) {
    const request = httpRequest({ rawPath: path });
    request.error = error as Error;
    if (withLog) request.context.log = logger();
    await problemDetails<HttpEvent, HttpResult, HttpContext>((event) => event.rawPath).onError!(request);
    const response = request.response!;
    return { status: response.statusCode, headers: response.headers, body: JSON.parse(response.body!) as Record<string, unknown>, text: response.body! };
  }

  it("answers an AppError as RFC 9457 problem+json: its kind's status and title, its message, the path as the instance, no cache; and logs nothing", async () => {
    const problem = await problemOf(new AppError('conflict', 'That wallet belongs to another account.'), { path: '/accounts/me/wallet' });
    expect(problem).toMatchObject({
      status: 409,
      headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
      body: { title: 'Conflict', status: 409, detail: 'That wallet belongs to another account.', instance: '/accounts/me/wallet' },
    });
    expect(lines).toEqual([]);
  });

  it('names each bad field of a 422, and carries an error’s own headers and extension members', async () => {
    const validation = await problemOf(new AppError('validation', 'One or more fields are invalid.', { page: ['must be at least 1'] }));
    expect(validation).toMatchObject({ status: 422, body: { title: 'Validation failed', errors: { page: ['must be at least 1'] } } });
    const behind = await problemOf(new AppError('notIndexedYet', 'Not yet.', undefined, { 'retry-after': '1' }, { indexedBlock: '8453:10' }));
    expect(behind).toMatchObject({ status: 409, headers: { 'retry-after': '1' }, body: { indexedBlock: '8453:10', title: 'Not indexed yet' } });
  });

  it('asks a 401 for a bearer token, and a 503 to retry after a while, unless the error says otherwise', async () => {
    expect((await problemOf(new AppError('unauthorized', 'A bearer token is required.'))).headers).toMatchObject({ 'www-authenticate': 'Bearer' });
    const invalid = new AppError('unauthorized', 'The bearer token is invalid.', undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });
    expect((await problemOf(invalid)).headers).toMatchObject({ 'www-authenticate': 'Bearer error="invalid_token"' });
    expect((await problemOf(new AppError('unavailable', 'Later.'))).headers).toMatchObject({ 'retry-after': String(unavailableRetryAfterSeconds) });
  });

  it('answers anything unexpected with a generic 500 that tells the client nothing of it (no message, stack or SQL), and logs it in full', async () => {
    const failure = new Error('syntax error at or near "SELEC" in SELEC * FROM hatchery.accounts WHERE id = $1');
    const problem = await problemOf(failure);
    expect(problem.status).toBe(500);
    expect(problem.body).toEqual({ title: 'Internal server error', status: 500, detail: 'An unexpected error occurred.', instance: '/accounts/me' });
    for (const leak of ['SELEC', 'hatchery.accounts', 'at ', '.ts:']) expect(problem.text).not.toContain(leak);
    expect(lines).toEqual([expect.objectContaining({ level: 'ERROR', message: 'request failed', err: expect.objectContaining({ message: failure.message }) })]);
    expect(written).toContain('stack');
  });

  it('answers a unique violation as a 409 and an unreachable database as a 503, neither naming the key, the constraint or the address', async () => {
    const unique = Object.assign(new Error('duplicate key value violates unique constraint "accounts_email_key"'), {
      code: '23505',
      detail: 'Key (email)=(alice@example.com) already exists.',
    });
    const conflict = await problemOf(unique);
    expect(conflict).toMatchObject({ status: 409, body: { detail: 'The request conflicts with existing data.' } });
    for (const leak of ['accounts_email_key', 'alice@example.com']) expect(conflict.text).not.toContain(leak);
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.3.7:5432'), { code: 'ECONNREFUSED' });
    const unavailable = await problemOf(refused);
    expect(unavailable).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { detail: 'The database is unavailable; try again shortly.' } });
    expect(unavailable.text).not.toContain('10.0.3.7');
  });

  it('logs an unexpected error with the process logger when the request logger has not run', async () => {
    await problemOf(new TypeError('x is undefined'), { withLog: false });
    expect(lines).toEqual([expect.objectContaining({ level: 'ERROR', message: 'request failed' })]);
  });
});

describe('httpCaching', () => {
  const page = JSON.stringify({ items: [{ tokenId: '1' }], totalCount: 1, page: 1, pageSize: 20 });
  const publicGet = { method: 'GET', auth: 'none' } as const;
  const ok = (body = page, headers: Record<string, string> = { 'content-type': 'application/json' }): HttpResult => ({
    statusCode: 200,
    headers: { ...headers },
    body,
  });

  /** The response after httpCaching's `after` on a GET of `/editions` answered `response`, with these request headers. */
  async function cached(route: Parameters<typeof httpCaching>[0], response: HttpResult, headers: Record<string, string> = {}, caching = httpCaching(route)) {
    const request: HttpRequest = httpRequest({ headers, rawQueryString: 'page=1' }, response);
    await caching.after!(request);
    return request.response!;
  }

  it('lets shared caches keep a public GET’s success a few seconds, and tags it with its entity tag', async () => {
    expect(await cached(publicGet, ok())).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'cache-control': publicCacheControl, etag: entityTag(page) },
      body: page,
    });
  });

  it('answers 304 without a body to an If-None-Match that holds the tag (weakly compared, in a list, or *), and 200 to any other', async () => {
    const etag = entityTag(page);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      expect(await cached(publicGet, ok(), { 'if-none-match': header }), header).toEqual({
        statusCode: 304,
        headers: { 'cache-control': publicCacheControl, etag },
      });
    }
    for (const header of ['"other"', etag.slice(1, -1), '']) {
      expect((await cached(publicGet, ok(), { 'if-none-match': header })).statusCode, header).toBe(200);
    }
  });

  it('never lets a cache keep a protected route’s answer, and gives it no tag', async () => {
    const answer = await cached({ method: 'GET', auth: 'jwt' }, ok(), { 'if-none-match': '*' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toEqual({ 'content-type': 'application/json', 'cache-control': privateCacheControl });
  });

  it('sets a route’s own Cache-Control when it has one, and keeps one its handler set', async () => {
    expect((await cached({ ...publicGet, cacheControl: 'public, max-age=3600' }, ok())).headers).toEqual({
      'content-type': 'application/json',
      'cache-control': 'public, max-age=3600',
    });
    const handlerChose = await cached(publicGet, ok('<html></html>', { 'content-type': 'text/html', 'cache-control': 'public, max-age=60' }));
    expect(handlerChose.headers).toEqual({ 'content-type': 'text/html', 'cache-control': 'public, max-age=60' });
  });

  it('leaves problems to the problem middleware, and a public POST uncached', async () => {
    const problem: HttpResult = { statusCode: 404, headers: { 'cache-control': 'no-store' }, body: '{}' };
    expect(await cached(publicGet, { ...problem, headers: { ...problem.headers } })).toEqual(problem);
    expect((await cached({ method: 'POST', auth: 'none' }, ok())).headers).toEqual({ 'content-type': 'application/json' });
  });

  it('tags a changed body anew at the same URL', async () => {
    const caching = httpCaching(publicGet);
    const changed = JSON.stringify({ items: [], totalCount: 0, page: 1, pageSize: 20 });
    const first = await cached(publicGet, ok(), {}, caching);
    const second = await cached(publicGet, ok(changed), { 'if-none-match': first.headers!.etag as string }, caching);
    expect(second.statusCode).toBe(200);
    expect(second.headers!.etag).toBe(entityTag(changed));
  });
});
