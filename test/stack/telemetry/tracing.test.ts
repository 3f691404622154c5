import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes } from '@hatchery/functions/routes';
import { client, freshCaller } from '../accounts/support';
import { startTestStack, type TestStack } from '../../support/stack';
import { bundleHandlers, httpEvent, probe, stackBacking, tracingEnvironment, xrayDaemon, type HandlerBundle } from '../../support/bundles';

/**
 * The wallet-nonce function, bundled as deployed, run in fresh processes with
 * the environment Lambda gives a function with active tracing; a UDP socket
 * stands in for the X-Ray daemon and receives what the X-Ray SDK sends.
 */
let stack: TestStack;
let workdir: string;
let bundle: HandlerBundle;
let daemon: Awaited<ReturnType<typeof xrayDaemon>>;

beforeAll(async () => {
  stack = await startTestStack();
  workdir = mkdtempSync(join(tmpdir(), 'hatchery-tracing-'));
  bundle = (await bundleHandlers([httpRoutes.requestWalletNonce.handler], workdir))[0]!;
  daemon = await xrayDaemon();
}, 120_000);

afterAll(async () => {
  await daemon?.close();
  await stack?.stop();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

const backing = () => ({
  ...stackBacking(stack),
  LOG_LEVEL: 'silent',
});

type Segment = {
  id: string;
  parent_id?: string;
  trace_id: string;
  name: string;
  namespace?: string;
  aws?: { operation?: string };
  subsegments?: Segment[];
  annotations?: Record<string, unknown>;
  fault?: boolean;
  error?: boolean;
};
const flatten = (segments: Segment[]): Segment[] => segments.flatMap((segment) => [segment, ...flatten(segment.subsegments ?? [])]);

async function nonceRequest() {
  const me = await client(stack, freshCaller('traced'));
  return httpEvent(httpRoutes.requestWalletNonce, { token: me.token });
}

describe('tracing', () => {
  it('traces the invocation in Lambda: a handler subsegment holding the DynamoDB call and the PostgreSQL round trips', async () => {
    daemon.documents.length = 0;
    const { probe: result } = await probe(bundle, await nonceRequest(), { ...backing(), ...tracingEnvironment(daemon.port) });
    expect(result.error).toBeUndefined();
    expect(result.statusCode).toBe(200);
    const segments = flatten(daemon.documents as Segment[]);
    const handler = segments.find((segment) => segment.name === '## index.handler');
    expect(handler, JSON.stringify(daemon.documents)).toBeDefined();
    expect(handler!.annotations).toMatchObject({ ColdStart: true, Service: 'hatchery' });
    // The first calls arrive inside the handler's document; any beyond them as documents of their own, naming their parent.
    const inside = [...(handler!.subsegments ?? []), ...segments.filter((segment) => segment.parent_id === handler!.id)];
    expect((daemon.documents as Segment[]).every((segment) => segment.trace_id === '1-5759e988-bd862e3fe1be46a994272793')).toBe(true);
    expect(inside.filter((segment) => segment.name === 'DynamoDB').map((segment) => segment.aws?.operation)).toContain('UpdateItem');
    expect(inside.filter((segment) => segment.name.startsWith('postgres')).map((segment) => [segment.name, segment.namespace])).toEqual(
      // Provisioning's two statements, then the challenge's transaction.
      [
        ['postgres query', 'remote'],
        ['postgres query', 'remote'],
        ['postgres transaction', 'remote'],
      ],
    );
    expect(inside.some((segment) => segment.fault || segment.error)).toBe(false);
  }, 90_000);

  it('sends nothing outside Lambda (the local stack, the tests), nor in Lambda with POWERTOOLS_TRACE_ENABLED=false', async () => {
    daemon.documents.length = 0;
    const { AWS_LAMBDA_FUNCTION_NAME: _name, ...notLambda } = tracingEnvironment(daemon.port);
    for (const env of [notLambda, { ...tracingEnvironment(daemon.port), POWERTOOLS_TRACE_ENABLED: 'false' }]) {
      const { probe: result } = await probe(bundle, await nonceRequest(), { ...backing(), ...env });
      expect(result.statusCode).toBe(200);
    }
    // A control run with tracing on, after the two: its documents arrive, so the two sent none rather than late ones.
    const { probe: control } = await probe(bundle, await nonceRequest(), { ...backing(), ...tracingEnvironment(daemon.port) });
    expect(control.statusCode).toBe(200);
    const names = flatten(daemon.documents as Segment[]).filter((segment) => segment.name === '## index.handler');
    expect(names).toHaveLength(1);
  }, 90_000);
});
