import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RateLimitRule } from '@hatchery/core/accounts/rate-limit';
import { AppError, toProblem } from '@hatchery/core/errors';
import { authenticate, bearerToken } from '@hatchery/functions/middleware/authenticate';
import { callerOf } from '@hatchery/functions/middleware/caller';
import { provisionAccount } from '@hatchery/functions/middleware/provision-account';
import { rateLimit } from '@hatchery/functions/middleware/rate-limit';
import type { HttpContext } from '@hatchery/functions/middleware/types';
import { startDynalite } from '@hatchery/local/dynamo';
import { ensureTable } from '@hatchery/platform/aws/table';
import { clearLogContext, logger, useLogDestination } from '@hatchery/platform/telemetry/logger';
import { metrics, setEmfSink, type EmfOutput } from '@hatchery/platform/telemetry/metrics';
import { freePort } from '@hatchery/local/ports';
import { httpRequest, thrownBy, type HttpRequest } from '../../unit/middleware/requests';

/**
 * The protected routes' middlewares, each on Middy's request: who the caller
 * is (authenticate, callerOf), the account provisioned for them, and their
 * share of a rate limit. The token's refusals and their audit lines are in
 * test/unit/functions/security-events.test.ts; here what a valid token
 * leaves on the request. The identity provider's JWKS is served on loopback,
 * the rate limiter's counters are kept in dynalite, and provisioning, which
 * needs PostgreSQL, is the collaborator stood in for (its own rules are
 * tested on a stack in test/stack/accounts/provisioning.test.ts).
 */
const provisioned = vi.hoisted(() => ({ created: false, calls: [] as string[] }));
vi.mock('@hatchery/core/accounts/provision', () => ({
  provisionAccount: async (identity: { userId: string }) => {
    provisioned.calls.push(identity.userId);
    return provisioned.created;
  },
}));

const projectId = 'hatchery-middleware';
const table = 'hatchery-rate-limits';
const key = await generateKeyPair('RS256');
let jwks: Server;
let dynalite: Awaited<ReturnType<typeof startDynalite>>;
let lines: Record<string, unknown>[];

beforeAll(async () => {
  const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createServer((_request, response) => response.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  dynalite = await startDynalite();
  for (const name of ['LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL']) delete process.env[name];
  Object.assign(process.env, {
    DATABASE_URL: `postgres://nobody@127.0.0.1:${await freePort()}/none`,
    DYNAMODB_ENDPOINT: dynalite.endpoint,
    DYNAMODB_TABLE: table,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    IDP_PROJECT_ID: projectId,
    IDP_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
  });
  await ensureTable(new DynamoDBClient({ endpoint: dynalite.endpoint, region: 'us-east-1' }), table);
});

afterAll(async () => {
  jwks?.close();
  await dynalite?.stop();
});

beforeEach(() => {
  lines = [];
  clearLogContext();
  useLogDestination({ write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
});

/** An ID token as the identity provider signs one, with `claims` over its defaults. */
function idToken(claims: JWTPayload = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: `https://securetoken.google.com/${projectId}`,
    aud: projectId,
    sub: 'alice',
    user_id: 'alice',
    iat: now - 10,
    auth_time: now - 10,
    exp: now + 3600,
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(key.privateKey);
}

const withCaller = (userId: string): HttpRequest => {
  const request = httpRequest();
  request.context.caller = { userId, email: `${userId}@example.com` };
  return request;
};

describe('bearerToken', () => {
  it('reads the token of an Authorization: Bearer header, the scheme in any case, spaces around the token allowed', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER   abc  ')).toBe('abc');
  });

  it('finds none in another scheme, an empty one, or two tokens', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer ', 'Basic YWxpY2U6c2VjcmV0', 'Bearerabc', 'Bearer abc def', 'Token abc']) {
      expect(bearerToken(header), String(header)).toBeUndefined();
    }
  });
});

describe('authenticate', () => {
  it('puts the verified caller on the context, and the account on every line logged after it', async () => {
    const request = httpRequest({ headers: { authorization: `Bearer ${await idToken({ email: 'Alice@Example.com', name: 'Alice' })}` } });
    await authenticate().before!(request);
    expect(request.context.caller).toEqual({ userId: 'alice', email: 'Alice@Example.com', name: 'Alice' });
    logger().info('handler line');
    expect(lines).toEqual([expect.objectContaining({ message: 'handler line', accountId: 'alice' })]);
  });

  it('answers a missing token with 401 and a bare Bearer challenge, and an invalid one with invalid_token', async () => {
    const missing = await thrownBy(authenticate().before, httpRequest());
    expect(toProblem(missing, '/accounts/me')).toMatchObject({
      status: 401,
      headers: { 'www-authenticate': 'Bearer' },
      body: { detail: 'A bearer token is required.' },
    });
    const basic = await thrownBy(authenticate().before, httpRequest({ headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' } }));
    expect(toProblem(basic, '/accounts/me').headers['www-authenticate']).toBe('Bearer');
    const expired = await thrownBy(
      authenticate().before,
      httpRequest({ headers: { authorization: `Bearer ${await idToken({ exp: Math.floor(Date.now() / 1000) - 60 })}` } }),
    );
    expect(toProblem(expired, '/accounts/me')).toMatchObject({
      status: 401,
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      body: { detail: 'The bearer token has expired.' },
    });
  });
});

describe('callerOf', () => {
  it('hands over the authenticated caller, and fails as a bug (not a 401) when authenticate() has not run', () => {
    const caller = { userId: 'alice' };
    expect(callerOf({ caller } as HttpContext)).toBe(caller);
    const error = (() => {
      try {
        callerOf({} as HttpContext);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).not.toBeInstanceOf(AppError);
    expect(toProblem(error, '/accounts/me').status).toBe(500);
  });
});

describe('provisionAccount', () => {
  beforeEach(() => {
    provisioned.calls = [];
  });

  it('provisions the caller’s account, and puts one audit line on the record when that created it', async () => {
    provisioned.created = true;
    await provisionAccount().before!(withCaller('alice'));
    expect(provisioned.calls).toEqual(['alice']);
    expect(lines).toEqual([expect.objectContaining({ level: 'INFO', message: 'account provisioned', accountId: 'alice' })]);
  });

  it('logs nothing for an account that was there already', async () => {
    provisioned.created = false;
    await provisionAccount().before!(withCaller('alice'));
    expect(provisioned.calls).toEqual(['alice']);
    expect(lines).toEqual([]);
  });

  it('provisions nothing without an authenticated caller', async () => {
    expect(await thrownBy(provisionAccount().before, httpRequest())).toBeInstanceOf(Error);
    expect(provisioned.calls).toEqual([]);
  });
});

describe('rateLimit', () => {
  const minute = 60_000;
  let documents: EmfOutput[];
  beforeEach(() => {
    documents = [];
    setEmfSink((document) => documents.push(document));
    // The middle of a window: no count here crosses into the next one.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Math.floor(Date.now() / minute) * minute + 30_000);
  });
  afterEach(() => {
    vi.useRealTimers();
    setEmfSink(undefined);
  });

  const rule = (name: string, limit = 2): RateLimitRule => ({ name, limit, windowMs: minute });

  it('lets a caller through up to the limit, then refuses with 429 and Retry-After until the window ends, counted as RateLimited', async () => {
    const limit = rateLimit(() => rule('unit-429'));
    expect(await thrownBy(limit.before, withCaller('alice'))).toBeUndefined();
    expect(await thrownBy(limit.before, withCaller('alice'))).toBeUndefined();
    const refused = await thrownBy(limit.before, withCaller('alice'));
    expect(toProblem(refused, '/accounts/me/wallet/nonce')).toMatchObject({
      status: 429,
      headers: { 'retry-after': '30' },
      body: { title: 'Too many requests', detail: 'At most 2 of these requests per 60 s; try again later.' },
    });
    metrics().publishStoredMetrics();
    expect(documents).toEqual([expect.objectContaining({ RateLimited: 1 })]);
  });

  it('counts each caller, and each rule, apart', async () => {
    const first = rateLimit(() => rule('unit-apart-a', 1));
    const second = rateLimit(() => rule('unit-apart-b', 1));
    expect(await thrownBy(first.before, withCaller('alice'))).toBeUndefined();
    expect(await thrownBy(first.before, withCaller('bob'))).toBeUndefined();
    expect(await thrownBy(second.before, withCaller('alice'))).toBeUndefined();
    expect(await thrownBy(first.before, withCaller('alice'))).toMatchObject({ kind: 'rateLimited' });
  });

  it('reads its rule on every request, so a changed setting applies at once', async () => {
    let allowed = 1;
    const limit = rateLimit(() => rule('unit-setting', allowed));
    expect(await thrownBy(limit.before, withCaller('alice'))).toBeUndefined();
    expect(await thrownBy(limit.before, withCaller('alice'))).toMatchObject({ kind: 'rateLimited' });
    allowed = 5;
    expect(await thrownBy(limit.before, withCaller('alice'))).toBeUndefined();
  });

  it('keeps the count in the shared table: one item per caller and window, expiring a window after its own ends', async () => {
    const limit = rateLimit(() => rule('unit-item', 10));
    for (let i = 0; i < 3; i++) await limit.before!(withCaller('carol'));
    const windowStart = Math.floor(Date.now() / minute) * minute;
    const documentsClient = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: dynalite.endpoint, region: 'us-east-1' }));
    try {
      const { Item } = await documentsClient.send(new GetCommand({ TableName: table, Key: { pk: 'ratelimit#unit-item#carol', sk: String(windowStart) } }));
      expect(Item).toEqual({ pk: 'ratelimit#unit-item#carol', sk: String(windowStart), hits: 3, expiresAt: (windowStart + 2 * minute) / 1000 });
    } finally {
      documentsClient.destroy();
    }
  });

  it('lets nothing through without an authenticated caller', async () => {
    const limit = rateLimit(() => rule('unit-anonymous'));
    const error = await thrownBy(limit.before, httpRequest());
    expect(toProblem(error, '/accounts/me/wallet/nonce').status).toBe(500);
  });
});
