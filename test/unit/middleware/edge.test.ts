import { afterEach, describe, expect, it, vi } from 'vitest';
import { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader } from '@hatchery/core/indexer/names';
import type { HttpResult } from '@hatchery/functions/middleware/types';
import { httpRequest, thrownBy, type HttpRequest } from './requests';

/**
 * The HTTP edge's middlewares, each on Middy's request as the chain hands it
 * over: CORS headers, the hub's origin check, the router's origin-verify
 * header, and nosniff. Their settings are read once per process, so each
 * test loads the middlewares afresh under the settings it names (and so
 * their errors are of that load's AppError: matched by name).
 */
const settings = {
  CORS_ORIGINS: 'https://app.example.org, http://localhost:5173',
  CORS_ALLOWED_HOST_SUFFIXES: '.preview.example.com',
  ORIGIN_VERIFY_SECRET: 'the-router-secret-0123456789abcdef',
};

async function edge(overrides: Partial<Record<keyof typeof settings, string | undefined>> = {}) {
  vi.resetModules();
  for (const [name, value] of Object.entries({ ...settings, ...overrides })) vi.stubEnv(name, value);
  return {
    ...(await import('@hatchery/functions/middleware/cors')),
    ...(await import('@hatchery/functions/middleware/allowed-origin')),
    ...(await import('@hatchery/functions/middleware/router-only')),
    ...(await import('@hatchery/functions/middleware/security-headers')),
    ...(await import('@hatchery/functions/origin-verify')),
    ...(await import('@hatchery/functions/cors-policy')),
  };
}

afterEach(() => vi.unstubAllEnvs());

const answered = (origin: string | undefined, response: HttpResult = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' }) =>
  httpRequest({ headers: { origin } }, response);

const corsHeaderNames = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers', 'vary'];

describe('cors', () => {
  it('gives an allowed origin its CORS headers, on an answer and on a problem alike', async () => {
    const { cors } = await edge();
    for (const phase of ['after', 'onError'] as const) {
      const request = answered('https://app.example.org');
      await cors()[phase]!(request);
      expect(request.response!.headers, phase).toEqual({
        'content-type': 'application/json',
        'access-control-allow-origin': 'https://app.example.org',
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': `retry-after,www-authenticate,${indexedBlockHeader},${safeBlockHeader},${finalizedBlockHeader}`,
        vary: 'Origin',
      });
    }
  });

  it('gives any other origin, or a request without one, no CORS header at all', async () => {
    const { cors } = await edge();
    for (const origin of ['https://elsewhere.example', 'https://app.example.org.evil.test', 'http://app.example.org', 'null', undefined]) {
      const request = answered(origin);
      await cors().after!(request);
      for (const name of corsHeaderNames) expect(request.response!.headers, String(origin)).not.toHaveProperty(name);
    }
  });

  it('allows a host that equals or ends with a configured suffix, at a dot: never one that merely ends with its letters', async () => {
    const { isOriginAllowed, corsHeaders, corsPolicy } = await edge();
    const allowed = (origin: string) => isOriginAllowed(origin, corsPolicy());
    expect(allowed('https://preview.example.com')).toBe(true);
    expect(allowed('https://pr-12.preview.example.com')).toBe(true);
    expect(allowed('http://pr-12.preview.example.com:8080')).toBe(true);
    expect(allowed('https://badpreview.example.com')).toBe(false);
    expect(allowed('https://preview.example.com.evil.test')).toBe(false);
    // An origin is scheme, host and port as a browser serializes them (its host lowercase): anything else is none.
    expect(allowed('https://PR-12.Preview.Example.com')).toBe(false);
    expect(allowed('https://pr-12.preview.example.com/')).toBe(false);
    expect(allowed('https://user@pr-12.preview.example.com')).toBe(false);
    expect(allowed('not a url')).toBe(false);
    expect(corsHeaders(httpRequest({ headers: { origin: 'https://pr-12.preview.example.com' } }).event)['access-control-allow-origin']).toBe(
      'https://pr-12.preview.example.com',
    );
  });

  it('ignores a leading dot, a blank suffix and case in the settings; with no setting, no origin is allowed', async () => {
    const loose = await edge({ CORS_ORIGINS: '', CORS_ALLOWED_HOST_SUFFIXES: 'Example.NET, ,..' });
    expect(loose.isOriginAllowed('https://a.example.net', loose.corsPolicy())).toBe(true);
    expect(loose.isOriginAllowed('https://example.org', loose.corsPolicy())).toBe(false);
    const none = await edge({ CORS_ORIGINS: undefined, CORS_ALLOWED_HOST_SUFFIXES: undefined });
    const request = answered('https://app.example.org');
    await none.cors().after!(request);
    expect(request.response!.headers).not.toHaveProperty('access-control-allow-origin');
  });

  it('leaves a request that has no response alone', async () => {
    const { cors } = await edge();
    const request = httpRequest({ headers: { origin: 'https://app.example.org' } });
    await cors().onError!(request);
    expect(request.response).toBeUndefined();
  });
});

describe('allowedOriginOnly', () => {
  const refusal = async (origin: string | undefined, host = 'api.example.test') => {
    const { allowedOriginOnly } = await edge();
    return thrownBy(allowedOriginOnly().before as (request: HttpRequest) => unknown, httpRequest({ headers: { origin, host } }));
  };

  it('lets through a caller that is no browser page (no Origin), a page of the API’s own host, and an origin the CORS settings allow', async () => {
    expect(await refusal(undefined)).toBeUndefined();
    expect(await refusal('https://api.example.test')).toBeUndefined();
    expect(await refusal('https://app.example.org')).toBeUndefined();
    expect(await refusal('https://pr-3.preview.example.com')).toBeUndefined();
  });

  it('refuses any other origin, or one that is not a URL, with 403', async () => {
    for (const origin of ['https://elsewhere.example', 'https://api.example.test.evil.test', 'null', '::']) {
      const error = await refusal(origin);
      expect(error, origin).toMatchObject({ name: 'AppError', kind: 'forbidden', message: 'This origin may not use the hub.' });
    }
  });
});

describe('routerOnly', () => {
  const refusal = async (header: string | undefined, overrides: Parameters<typeof edge>[0] = {}) => {
    const { routerOnly, originVerifyHeader } = await edge(overrides);
    return thrownBy(routerOnly().before as (request: HttpRequest) => unknown, httpRequest({ headers: { [originVerifyHeader]: header } }));
  };

  it('lets through a request carrying the router’s secret', async () => {
    expect(await refusal(settings.ORIGIN_VERIFY_SECRET)).toBeUndefined();
  });

  it('refuses with 403 a request without the header, or with any other value, a prefix or a longer one included', async () => {
    const secret = settings.ORIGIN_VERIFY_SECRET;
    for (const header of [undefined, '', 'x'.repeat(secret.length), secret.slice(0, -1), `${secret}x`, secret.toUpperCase()]) {
      const error = await refusal(header);
      expect(error, String(header)).toMatchObject({ name: 'AppError', kind: 'forbidden', message: 'Requests must come through the service’s base URL.' });
    }
  });

  it('checks nothing where no secret is configured (the local stack)', async () => {
    expect(await refusal(undefined, { ORIGIN_VERIFY_SECRET: undefined })).toBeUndefined();
    expect(await refusal('anything', { ORIGIN_VERIFY_SECRET: undefined })).toBeUndefined();
  });
});

describe('addSecurityHeaders', () => {
  it('adds nosniff to an answer and to a problem, keeping their own headers', async () => {
    const { addSecurityHeaders } = await edge();
    for (const phase of ['after', 'onError'] as const) {
      const request = httpRequest({}, { statusCode: phase === 'after' ? 200 : 404, headers: { 'content-type': 'application/problem+json' } });
      await addSecurityHeaders()[phase]!(request as never);
      expect(request.response!.headers, phase).toEqual({ 'content-type': 'application/problem+json', 'x-content-type-options': 'nosniff' });
    }
    const bare = httpRequest({}, { statusCode: 204 });
    await addSecurityHeaders().after!(bare as never);
    expect(bare.response!.headers).toEqual({ 'x-content-type-options': 'nosniff' });
  });
});
