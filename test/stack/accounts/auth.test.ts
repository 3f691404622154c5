import { createHmac, createPublicKey, type JsonWebKey } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { base64url, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountLimits } from '@hatchery/core/accounts/limits';
import { startTestStack, type TestStack } from '../../support/stack';
import { call } from './support';

/**
 * Tokens against a real JWKS over HTTP: the stack's own endpoint, which here
 * publishes, beside the identity provider's key, one more key whose private
 * half this file holds (providers publish several keys, for rotation), so it
 * can sign tokens that are well-formed in every way but one.
 */
let stack: TestStack;
let jwksFetches = 0;
let trustedKey: CryptoKey;
let trustedPrivateJwk: JWK;
const trustedKid = 'test-trusted-1';
const projectId = 'hatchery-local';
const issuer = `https://securetoken.google.com/${projectId}`;

beforeAll(async () => {
  stack = await startTestStack();
  const pair = await generateKeyPair('RS256', { extractable: true });
  trustedKey = pair.privateKey;
  trustedPrivateJwk = await exportJWK(pair.privateKey);
  stack.idp.jwks.keys.push({ ...(await exportJWK(pair.publicKey)), kid: trustedKid, alg: 'RS256', use: 'sig' });
  stack.gateway.server.on('request', (request: IncomingMessage) => {
    if (request.url === '/.well-known/jwks.json') jwksFetches++;
  });
  expect(process.env.IDP_JWKS_URL).toBe(`${stack.url}/.well-known/jwks.json`);
});

afterAll(() => stack?.stop());

const now = () => Math.floor(Date.now() / 1000);

/** A token as the identity provider would sign it, with `claims` and `header` overriding the defaults (undefined removes a claim). */
async function forge(uid: string, options: { claims?: Record<string, unknown>; header?: Record<string, unknown>; key?: CryptoKey } = {}): Promise<string> {
  const claims: Record<string, unknown> = {
    iss: issuer,
    aud: projectId,
    sub: uid,
    user_id: uid,
    email: `${uid}@example.com`,
    auth_time: now() - 600,
    iat: now(),
    exp: now() + 3600,
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader({ alg: 'RS256', kid: trustedKid, typ: 'JWT', ...options.header } as never)
    .sign(options.key ?? trustedKey);
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value));

function unsigned(uid: string, kid: string): string {
  return `${encode({ alg: 'none', kid, typ: 'JWT' })}.${encode({ iss: issuer, aud: projectId, sub: uid, user_id: uid, email: `${uid}@example.com`, iat: now(), exp: now() + 3600 })}.`;
}

/** The classic key-confusion forgery: HS256 with the provider's public key (PEM) as the HMAC secret. */
function hmacWithPublicKey(uid: string): Promise<string> {
  const publicJwk = stack.idp.jwks.keys[0]!;
  const input = `${encode({ alg: 'HS256', kid: publicJwk.kid, typ: 'JWT' })}.${encode({ iss: issuer, aud: projectId, sub: uid, user_id: uid, email: `${uid}@example.com`, iat: now(), exp: now() + 3600 })}`;
  const pem = createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  return Promise.resolve(`${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`);
}

const me = (token?: string) => call(stack, 'GET', '/accounts/me', { token });

/** A request with each value of a header on a line of its own, which fetch cannot send. */
function getWithHeaders(path: string, headers: Record<string, string | string[]>): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${stack.url}${path}`, { headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('valid tokens', () => {
  it('accepts a token of the stack’s identity provider, checked against the JWKS fetched over HTTP, and caches the JWKS', async () => {
    const token = await stack.idp.signToken({ uid: 'idp-user', email: 'idp-user@example.com', name: 'Idp User' });
    const first = await me(token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: 'idp-user', email: 'idp-user@example.com', nickname: 'Idp User' });
    const fetchesAfterFirst = jwksFetches;
    expect(fetchesAfterFirst).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 3; i++) expect((await me(token)).status).toBe(200);
    expect(jwksFetches).toBe(fetchesAfterFirst);
  });

  it('accepts a well-formed token of the second published key (the control for every forgery below)', async () => {
    const reply = await me(await forge('control-user'));
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe('control-user');
  });

  it('takes the user id from user_id, and from sub when user_id is absent', async () => {
    const both = await me(await forge('from-user-id', { claims: { sub: 'some-other-sub' } }));
    expect(both.status).toBe(200);
    expect(both.body.id).toBe('from-user-id');
    const subOnly = await me(await forge('from-sub', { claims: { user_id: undefined } }));
    expect(subOnly.status).toBe(200);
    expect(subOnly.body.id).toBe('from-sub');
  });

  it('allows the named clock skew: iat and auth_time a little ahead of this clock are accepted', async () => {
    const ahead = now() + accountLimits.tokenClockSkewSeconds - 10;
    const reply = await me(await forge('within-skew', { claims: { iat: ahead, auth_time: ahead } }));
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe('within-skew');
  });
});

describe('missing or invalid tokens: 401, WWW-Authenticate: Bearer, and no account', () => {
  const forgeries: Array<[string, (uid: string) => Promise<string>]> = [
    ['expired', (uid) => forge(uid, { claims: { iat: now() - 7200, exp: now() - 60 } })],
    ['nbf in the future', (uid) => forge(uid, { claims: { nbf: now() + 600 } })],
    ['another audience', (uid) => forge(uid, { claims: { aud: 'another-project' } })],
    ['another issuer', (uid) => forge(uid, { claims: { iss: 'https://securetoken.google.com/another-project' } })],
    [
      'another project, issuer and audience',
      (uid) => forge(uid, { claims: { iss: 'https://securetoken.google.com/another-project', aud: 'another-project' } }),
    ],
    ['an issuer that is not securetoken', (uid) => forge(uid, { claims: { iss: 'https://accounts.example.com/hatchery-local' } })],
    ['alg none, known kid', async (uid) => unsigned(uid, trustedKid)],
    ['alg none, no kid', async (uid) => unsigned(uid, '').replace(encode({ alg: 'none', kid: '', typ: 'JWT' }), encode({ alg: 'none', typ: 'JWT' }))],
    ['HS256 signed with the public key', hmacWithPublicKey],
    ['an unknown kid', async (uid) => forge(uid, { header: { kid: 'nobody-knows-me' }, key: (await generateKeyPair('RS256')).privateKey })],
    ['a known kid but another key', async (uid) => forge(uid, { key: (await generateKeyPair('RS256')).privateKey })],
    [
      'RS384 with a key published for RS256',
      async (uid) => forge(uid, { header: { alg: 'RS384' }, key: (await importJWK(trustedPrivateJwk, 'RS384')) as CryptoKey }),
    ],
    ['a truncated signature', async (uid) => (await forge(uid)).slice(0, -8)],
    ['no signature part', async (uid) => (await forge(uid)).split('.').slice(0, 2).join('.')],
    ['a truncated token', async (uid) => (await forge(uid)).slice(0, 40)],
    [
      'a tampered payload',
      async (uid) => {
        const [header, , signature] = (await forge(uid)).split('.');
        return `${header}.${encode({ iss: issuer, aud: projectId, sub: uid, user_id: uid, email: `${uid}@example.com`, iat: now(), exp: now() + 7200 })}.${signature}`;
      },
    ],
    ['no user_id nor sub', (uid) => forge(uid, { claims: { user_id: undefined, sub: undefined } })],
    ['empty user_id and sub', (uid) => forge(uid, { claims: { user_id: '', sub: '' } })],
    ['no expiry', (uid) => forge(uid, { claims: { exp: undefined } })],
    // Firebase's rules beyond the library's: iat and auth_time in the past (beyond the allowed skew), sub a non-empty string.
    ['iat in the future', (uid) => forge(uid, { claims: { iat: now() + accountLimits.tokenClockSkewSeconds + 60 } })],
    ['no iat', (uid) => forge(uid, { claims: { iat: undefined } })],
    ['iat not a number', (uid) => forge(uid, { claims: { iat: String(now()) } })],
    ['auth_time in the future', (uid) => forge(uid, { claims: { auth_time: now() + accountLimits.tokenClockSkewSeconds + 60 } })],
    ['no auth_time', (uid) => forge(uid, { claims: { auth_time: undefined } })],
    ['auth_time not a number', (uid) => forge(uid, { claims: { auth_time: 'yesterday' } })],
    ['no sub, though user_id is set', (uid) => forge(uid, { claims: { sub: undefined } })],
    ['an empty sub, though user_id is set', (uid) => forge(uid, { claims: { sub: '' } })],
    ['a sub that is not a string', (uid) => forge(uid, { claims: { sub: 42 } })],
    ['not a JWT at all', async () => 'not-a-jwt'],
  ];

  it.each(forgeries)('%s → 401', async (name, make) => {
    const uid = `forged-${name.replace(/\W+/g, '-')}`;
    const reply = await me(await make(uid));
    expect(reply.status).toBe(401);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(reply.problem).toMatchObject({ status: 401, title: 'Unauthorized', instance: '/accounts/me' });
    expect(JSON.stringify(reply.body)).not.toMatch(/at .*\.ts|stack/i);
  });

  it('says an expired token has expired', async () => {
    const reply = await me(await forge('forged-expired-detail', { claims: { iat: now() - 7200, exp: now() - 60 } }));
    expect(reply.problem.detail).toMatch(/expired/);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it.each([
    ['no Authorization header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', 'Bearer '],
  ])('%s → 401 on every protected endpoint', async (_name, authorization) => {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    for (const [method, path] of [
      ['GET', '/accounts/me'],
      ['POST', '/accounts/me/wallet/nonce'],
      ['POST', '/accounts/me/wallet'],
      ['DELETE', '/accounts/me/wallet'],
    ] as const) {
      const response = await fetch(`${stack.url}${path}`, { method, headers });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    }
  });

  it.each([
    ['a valid token, then garbage', async () => [`Bearer ${await forge('forged-dup-first')}`, 'garbage']],
    ['garbage, then a valid token', async () => ['Bearer garbage', `Bearer ${await forge('forged-dup-second')}`]],
    ['valid tokens of two users', async () => [`Bearer ${await forge('forged-dup-a')}`, `Bearer ${await forge('forged-dup-b')}`]],
  ])('two Authorization headers (%s) reach the handler joined with a comma, as in API Gateway: 401', async (_name, make) => {
    const reply = await getWithHeaders('/accounts/me', { authorization: await make() });
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toMatch(/^Bearer\b/);
  });

  it('created no account for any rejected token', async () => {
    const forged = await stack.sql(`SELECT id FROM hatchery.accounts WHERE id LIKE 'forged-%'`);
    expect(forged).toEqual([]);
    const ids = (await stack.sql<{ id: string }>('SELECT id FROM hatchery.accounts ORDER BY id')).map((row) => row.id);
    expect(ids).toEqual(['control-user', 'from-sub', 'from-user-id', 'idp-user', 'within-skew']);
  });
});
