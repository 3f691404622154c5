import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { challengeRow, client, freshCaller, type Challenge } from '../accounts/support';
import { docBlock, where } from '../../support/docs';
import { startTestStack, type TestStack } from '../../support/stack';
import { httpEvent as event, stackBacking } from '../../support/bundles';
import { parseEmf } from '../../support/emf';

const run = promisify(execFile);

/**
 * The log lines of real invocations, read from the stdout of a fresh process
 * (the logger writes to file descriptor 1 itself, out of this process's reach).
 */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Runs the invocations in a fresh process and returns its log lines, parsed, and the EMF lines apart. */
async function invoke(invocations: { route: HttpRoute; event: APIGatewayProxyEventV2 }[], env: Record<string, string> = {}) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/stack/telemetry/invoke.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...stackBacking(stack),
      LOG_LEVEL: 'debug',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      _X_AMZN_TRACE_ID: 'Root=1-6759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0',
      INVOCATIONS: JSON.stringify(invocations.map(({ route, event }) => ({ handler: route.handler, event, functionName: event.routeKey }))),
      ...env,
    },
    timeout: 60_000,
  });
  const lines = stdout.split('\n').filter(Boolean);
  return {
    stdout,
    logs: lines.filter((line) => !parseEmf(line)).map((line) => JSON.parse(line) as Record<string, unknown>),
    emf: lines.filter((line) => parseEmf(line)),
  };
}

describe('log lines', () => {
  it('carry the request id, the route and the account id, and never the token or the signature', async () => {
    const caller = freshCaller('logs');
    const me = await client(stack, caller);
    const signer = privateKeyToAccount(generatePrivateKey());
    const challenge = (await me.nonce()).body as Challenge;
    const signature = await signer.signMessage({ message: challenge.message });
    const invocations = [
      { route: httpRoutes.getMe, event: event(httpRoutes.getMe, { token: me.token }) },
      { route: httpRoutes.linkWallet, event: event(httpRoutes.linkWallet, { token: me.token, body: { address: signer.address, signature } }) },
    ];
    const { stdout, logs: lines, emf } = await invoke(invocations);
    expect(lines.map((line) => [line.message, line.status, line.route])).toEqual([
      ['request', 200, 'GET /accounts/me'],
      ['wallet linked', undefined, 'POST /accounts/me/wallet'],
      ['request', 200, 'POST /accounts/me/wallet'],
    ]);
    const logs = lines.filter((line) => line.message === 'request');
    logs.forEach((line, index) => {
      expect(line).toMatchObject({
        service: 'hatchery',
        requestId: invocations[index]!.event.requestContext.requestId,
        accountId: caller.uid,
        function_name: invocations[index]!.event.routeKey,
        cold_start: index === 0,
      });
      expect(line.function_request_id).toEqual(expect.any(String));
    });
    // The line docs/operating.md shows: the same keys in the same order, each value of the same type.
    const documented = JSON.parse(docBlock('log-line').text) as Record<string, unknown>;
    const typesOf = (line: Record<string, unknown>) => Object.entries(line).map(([key, value]) => [key, typeof value]);
    expect(typesOf(logs[0]!), where(docBlock('log-line'))).toEqual(typesOf(documented));
    expect(logs[0]!.xray_trace_id).toBe('1-6759e988-bd862e3fe1be46a994272793');
    expect(emf.length).toBeGreaterThanOrEqual(2);
    expect(stdout).not.toContain(me.token);
    expect(stdout).not.toContain(signature.slice(2));
  }, 90_000);

  it('carry them on lines logged deep in the domain too (a dependency failing), and not the account id before the token is verified', async () => {
    const me = await client(stack, freshCaller('logs'));
    const invocations = [
      { route: httpRoutes.requestWalletNonce, event: event(httpRoutes.requestWalletNonce, { token: me.token }) },
      { route: httpRoutes.getMe, event: event(httpRoutes.getMe, { token: 'not-a-jwt' }) },
    ];
    // DynamoDB unreachable: the rate limiter logs its failure from the domain, then the request is 503.
    const { stdout, logs } = await invoke(invocations, { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' });
    const [provisioned, failure, nonce, refused, unauthorized] = logs;
    expect(provisioned).toMatchObject({ level: 'INFO', message: 'account provisioned', requestId: invocations[0]!.event.requestContext.requestId });
    expect(failure).toMatchObject({
      level: 'ERROR',
      message: 'rate-limit counter update failed',
      requestId: invocations[0]!.event.requestContext.requestId,
      route: 'POST /accounts/me/wallet/nonce',
      accountId: expect.any(String),
    });
    expect(failure!.function_request_id).toBe(nonce!.function_request_id);
    expect(nonce).toMatchObject({ message: 'request', status: 503, route: 'POST /accounts/me/wallet/nonce' });
    expect(refused).toMatchObject({ level: 'INFO', message: 'token refused', reason: 'malformed', requestId: invocations[1]!.event.requestContext.requestId });
    expect(refused).not.toHaveProperty('accountId');
    expect(unauthorized).toMatchObject({
      message: 'request',
      status: 401,
      route: 'GET /accounts/me',
      requestId: invocations[1]!.event.requestContext.requestId,
    });
    expect(unauthorized).not.toHaveProperty('accountId');
    expect(logs).toHaveLength(5);
    expect(stdout).not.toContain(me.token);
    expect(stdout).not.toContain('not-a-jwt');
  }, 90_000);

  it("at the default level, the audit trail of an account's events (docs/operating.md, Audit trail): each its own INFO line naming the request, the account and the wallet, none the token or the signature", async () => {
    const caller = freshCaller('audit');
    const token = await stack.idp.signToken(caller);
    // The first request provisions the account; the challenge it asks for is signed here, between the two processes.
    const first = [
      { route: httpRoutes.getMe, event: event(httpRoutes.getMe, { token }) },
      { route: httpRoutes.requestWalletNonce, event: event(httpRoutes.requestWalletNonce, { token }) },
    ];
    const provisioning = await invoke(first, { LOG_LEVEL: '' });
    const signer = privateKeyToAccount(generatePrivateKey());
    const signature = await signer.signMessage({ message: (await challengeRow(stack, caller.uid))!.message });
    const link = () => ({ route: httpRoutes.linkWallet, event: event(httpRoutes.linkWallet, { token, body: { address: signer.address, signature } }) });
    // The same signature posted twice: the second finds no challenge.
    const then = [link(), link(), { route: httpRoutes.unlinkWallet, event: event(httpRoutes.unlinkWallet, { token }) }];
    const linking = await invoke(then, { LOG_LEVEL: '' });
    const requestIdOf = (invocation: { event: APIGatewayProxyEventV2 }) => invocation.event.requestContext.requestId;
    const own = ({ level, message, requestId, accountId, wallet, reason }: Record<string, unknown>) =>
      Object.fromEntries(Object.entries({ level, message, requestId, accountId, wallet, reason }).filter(([, value]) => value !== undefined));
    const wallet = signer.address.toLowerCase();
    const audit = [...provisioning.logs, ...linking.logs].filter((line) => line.message !== 'request');
    expect(audit.map(own)).toEqual([
      { level: 'INFO', message: 'account provisioned', requestId: requestIdOf(first[0]!), accountId: caller.uid },
      { level: 'INFO', message: 'wallet linked', requestId: requestIdOf(then[0]!), accountId: caller.uid, wallet },
      { level: 'INFO', message: 'wallet link refused', requestId: requestIdOf(then[1]!), accountId: caller.uid, wallet, reason: 'noChallenge' },
      { level: 'INFO', message: 'wallet unlinked', requestId: requestIdOf(then[2]!), accountId: caller.uid, wallet },
    ]);
    for (const stdout of [provisioning.stdout, linking.stdout]) {
      expect(stdout).not.toContain(token.split('.')[2]);
      expect(stdout).not.toContain(signature.slice(2));
    }
  }, 90_000);
});
