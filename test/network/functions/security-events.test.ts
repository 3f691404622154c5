import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '@hatchery/local/ports';
import { lambdaContext, loadHandler } from '@hatchery/local/gateway/lambda';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import type { HttpContext, HttpResult } from '@hatchery/functions/middleware/types';
import { useLogDestination } from '@hatchery/platform/telemetry/logger';
import { setEmfSink } from '@hatchery/platform/telemetry/metrics';
import { httpEvent } from '../../support/bundles';
import { docBlock, repository, where } from '../../support/docs';

/**
 * The audit trail (docs/operating.md, Audit trail), as the real handlers and
 * middlewares write it at the default level, read from the logger's output
 * in this process. A refused token needs no database: the protected chain
 * refuses it before provisioning, against a JWKS served here on loopback.
 * The events that need one (an account provisioned, a wallet linked,
 * unlinked or refused) run through their handlers in test/stack/telemetry/logging.test.ts;
 * here their lines' shape, through the request chain.
 */
const projectId = 'hatchery-audit';
const issuer = `https://securetoken.google.com/${projectId}`;
const keys = { signing: await generateKeyPair('RS256'), other: await generateKeyPair('RS256') };
let jwks: Server;
let lines: Record<string, unknown>[];
let written: string;

beforeAll(async () => {
  const jwk = { ...(await exportJWK(keys.signing.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createServer((_request, response) => response.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const closedPort = await freePort();
  // The default level: nothing set, so the trail's lines are written as in a deployed function.
  for (const name of ['LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL']) delete process.env[name];
  Object.assign(process.env, {
    DATABASE_URL: `postgres://nobody@127.0.0.1:${closedPort}/none`,
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${closedPort}`,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    IDP_PROJECT_ID: projectId,
    IDP_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
  });
  setEmfSink(() => undefined);
});

afterAll(() => {
  jwks?.close();
  setEmfSink(undefined);
});

beforeEach(() => {
  lines = [];
  written = '';
  useLogDestination({
    write: (line: string) => {
      written += line;
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** An ID token as the identity provider signs one, with `claims` over its defaults; `kid` and the key may be another's. */
function idToken(claims: JWTPayload = {}, { key = keys.signing.privateKey, kid = 'k1' } = {}): Promise<string> {
  const now = nowSeconds();
  const payload = { iss: issuer, aud: projectId, sub: 'alice', user_id: 'alice', iat: now - 10, auth_time: now - 10, exp: now + 3600, ...claims };
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
}

/** The route's own handler, as the local stack loads and invokes it. */
async function invoke(route: HttpRoute, options: Parameters<typeof httpEvent>[1]) {
  const handler = await loadHandler(route.handler);
  const event = httpEvent(route, options);
  const result = (await handler(event, lambdaContext(route.handler))) as HttpResult;
  return { status: result.statusCode, requestId: event.requestContext.requestId };
}

describe('the audit trail', () => {
  const refused: [string, () => Promise<string | undefined>][] = [
    ['missing', async () => undefined],
    ['malformed', async () => 'not-a-jwt'],
    ['badSignature', () => idToken({}, { key: keys.other.privateKey })],
    ['unknownKey', () => idToken({}, { kid: 'k2' })],
    ['wrongIssuer', () => idToken({ iss: 'https://securetoken.google.com/another-project' })],
    ['wrongAudience', () => idToken({ aud: 'another-project' })],
    ['expired', () => idToken({ iat: nowSeconds() - 7200, auth_time: nowSeconds() - 7200, exp: nowSeconds() - 3600 })],
    ['notYetValid', () => idToken({ nbf: nowSeconds() + 3600 })],
    ['brokenRule', () => idToken({ sub: '' })],
  ];
  for (const [reason, token] of refused) {
    it(`a token refused as ${reason}: one INFO line with the request's id and the reason, no account, and nothing of the token`, async () => {
      const bearer = await token();
      const { status, requestId } = await invoke(httpRoutes.getMe, { token: bearer });
      expect(status).toBe(401);
      const audit = lines.filter((line) => line.message === 'token refused');
      expect(audit).toEqual([expect.objectContaining({ level: 'INFO', requestId, route: 'GET /accounts/me', reason })]);
      expect(audit[0]).not.toHaveProperty('accountId');
      if (bearer) for (const part of bearer.split('.')) expect(written).not.toContain(part);
    });
  }

  it('a link with a refused token: neither its token nor its signature on any line', async () => {
    const bearer = await idToken({ exp: nowSeconds() - 60 });
    const signature = `0x${'5e'.repeat(64)}1b`;
    const { status } = await invoke(httpRoutes.linkWallet, { token: bearer, body: { address: `0x${'ab'.repeat(20)}`, signature } });
    expect(status).toBe(401);
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['INFO', 'token refused'],
      ['INFO', 'request'],
    ]);
    expect(written).not.toContain(signature.slice(2, 66));
    for (const part of bearer.split('.')) expect(written).not.toContain(part);
  });

  it('a line of an event on an account: INFO, its message, the request id, the account, the wallet where there is one, the reason of a refusal, and nothing else', async () => {
    const { httpHandler } = await import('@hatchery/functions/http/handler');
    const events = await import('@hatchery/functions/security-events');
    const wallet = `0x${'ab'.repeat(20)}`;
    const route = {
      method: 'POST',
      path: '/audit',
      handler: 'packages/functions/src/http/audit.handler',
      auth: 'none',
      summary: 'Each event on an account.',
    } as const satisfies HttpRoute;
    const handler = httpHandler(route, async () => {
      events.accountProvisioned('alice');
      events.walletLinked({ id: 'alice', email: 'alice@example.com', nickname: 'Alice', status: 'ACTIVE', walletAddress: wallet, walletLinked: true });
      events.walletLinkRefused('alice', wallet.toUpperCase().replace('0X', '0x'), 'addressMismatch');
      events.walletUnlinked('alice', wallet);
      return {};
    });
    const event = httpEvent(route, {});
    expect((await handler(event, lambdaContext('audit') as HttpContext)).statusCode).toBe(200);
    const { requestId } = event.requestContext;
    const audit = lines.filter((line) => line.message !== 'request');
    const ownFields = (line: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(line).filter(([key]) => !['timestamp', 'service', 'cold_start', 'function_name', 'function_request_id', 'xray_trace_id'].includes(key)),
      );
    expect(audit.map(ownFields)).toEqual([
      { level: 'INFO', message: 'account provisioned', requestId, route: 'POST /audit', accountId: 'alice' },
      { level: 'INFO', message: 'wallet linked', requestId, route: 'POST /audit', accountId: 'alice', wallet },
      { level: 'INFO', message: 'wallet link refused', requestId, route: 'POST /audit', accountId: 'alice', wallet, reason: 'addressMismatch' },
      { level: 'INFO', message: 'wallet unlinked', requestId, route: 'POST /audit', accountId: 'alice', wallet },
    ]);
  });

  it("is listed in docs/operating.md: each line's message and each reason a token is refused for, and its query finds every line", async () => {
    const { securityEvents, tokenRefusals } = await import('@hatchery/functions/security-events');
    const operating = readFileSync(`${repository}/docs/operating.md`, 'utf8');
    const start = operating.indexOf('\n## Audit trail\n');
    expect(start).toBeGreaterThan(0);
    const section = operating.slice(start, operating.indexOf('\n## ', start + 1));
    for (const message of Object.values(securityEvents)) expect(section).toContain(`| \`${message}\``);
    for (const reason of tokenRefusals) expect(section).toContain(`\`${reason}\``);
    const query = docBlock('audit-trail-query');
    const filtered = /filter message in (\[.*\])/.exec(query.text)?.[1];
    expect(JSON.parse(filtered ?? '[]'), where(query)).toEqual(Object.values(securityEvents));
  });
});
