import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { client, freshCaller, type Challenge } from '../accounts/support';
import { docBlock, where } from '../support/docs';
import { startTestStack, type TestStack } from '../support/stack';
import { httpEvent as event, stackBacking } from '../support/bundles';
import { parseEmf } from '../support/emf';

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
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/telemetry/invoke.ts'], {
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
    const { stdout, logs, emf } = await invoke(invocations);
    expect(logs.map((line) => [line.message, line.status, line.route])).toEqual([
      ['request', 200, 'GET /accounts/me'],
      ['request', 200, 'POST /accounts/me/wallet'],
    ]);
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
    const [failure, nonce, unauthorized] = logs;
    expect(failure).toMatchObject({
      level: 'ERROR',
      message: 'rate-limit counter update failed',
      requestId: invocations[0]!.event.requestContext.requestId,
      route: 'POST /accounts/me/wallet/nonce',
      accountId: expect.any(String),
    });
    expect(failure!.function_request_id).toBe(nonce!.function_request_id);
    expect(nonce).toMatchObject({ message: 'request', status: 503, route: 'POST /accounts/me/wallet/nonce' });
    expect(unauthorized).toMatchObject({
      message: 'request',
      status: 401,
      route: 'GET /accounts/me',
      requestId: invocations[1]!.event.requestContext.requestId,
    });
    expect(unauthorized).not.toHaveProperty('accountId');
    expect(logs).toHaveLength(3);
    expect(stdout).not.toContain(me.token);
    expect(stdout).not.toContain('not-a-jwt');
  }, 90_000);
});
