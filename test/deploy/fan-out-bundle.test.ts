import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '@hatchery/platform/config';
import { shardOf } from '@hatchery/core/realtime/connections';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { fanOutHandler } from '@hatchery/functions/routes/realtime';
import { startTestStack, type TestStack } from '../support/stack';
import { connectHub, record, waitFor, type Hub } from '../stack/realtime/support';
import { bundleOf } from '../support/bundles';
import { printColdStarts, probeTarget, type Backing, type ColdStartTarget } from './cold-start';
import { buildHandler } from './sst/build-handler';
import { repositoryRoot } from './sst/platform';
import type { DeployedFunction } from './sst/deployed';

/**
 * The fan-out function built as the SST CLI builds a Node.js function (see
 * bundles.test.ts, which does it for every function infra/ deploys), then
 * imported and invoked once in a fresh process whose only configuration is
 * what Lambda and SST give it, for the shard of a live hub connection.
 */
let stack: TestStack;
let workdir: string;
let target: ColdStartTarget;
let hub: Hub;

beforeAll(async () => {
  stack = await startTestStack();
  workdir = mkdtempSync(join(tmpdir(), 'hatchery-fan-out-bundle-'));
  const key = randomBytes(32).toString('base64');
  // What infra links to every function; the configuration validates the database URL even where it is not used.
  const links = { Table: { name: config().DYNAMODB_TABLE }, DatabaseUrl: { value: stack.databaseUrl } };
  const built = await buildHandler(repositoryRoot, workdir, {
    functionID: 'FanOut',
    handler: fanOutHandler,
    runtime: 'nodejs24.x',
    encryptionKey: key,
    links,
    properties: { format: 'esm', minify: true },
  });
  expect(built.errors).toEqual([]);
  const file = join(built.out, built.handler.replace(/\.[^.]+$/, '.mjs'));
  // The probe reads only these of a deployed function: its handler, its environment, its task root and its bundle.
  const fn = {
    lambda: { handler: built.handler },
    environment: { SST_KEY: key, SST_KEY_FILE: 'resource.enc', WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url },
  } as unknown as DeployedFunction;
  target = {
    key: 'FanOut',
    via: 'migrator',
    fn,
    taskRoot: built.out,
    bundle: bundleOf(file),
  };
  hub = await connectHub(stack.url);
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  await stack?.stop();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

describe('the fan-out function’s bundle', () => {
  it('is one small self-contained file that posts a shard’s frame to its connections when Lambda invokes it', async () => {
    const [id] = [...stack.hub.connections.keys()];
    const market = record(hub, 'marketChanged');
    const payload = { count: 7, maxBlock: '77', version: 7 };
    const backing: Backing = { databaseUrl: stack.databaseUrl, dynamoEndpoint: stack.dynamoEndpoint, managementEndpoint: stack.url, idpProjectId: 'unused' };
    const result = await probeTarget(target, backing, { event: { event: 'marketChanged#1', shard: shardOf(id!), frame: marketChangedMessage(payload) } });
    printColdStarts([{ key: target.key, handler: fanOutHandler, bundle: target.bundle, probe: result }]);
    expect(result.error).toBeUndefined();
    expect(result.result).toEqual({ sent: 1, gone: 0, failed: 0, skipped: 0, paceFactor: 1 });
    await waitFor(() => market.length === 1, 'the frame at the client');
    expect(market).toEqual([payload]);
    // Self-contained and small: its size budget (test/budgets.json) is asserted with every function's in bundles.test.ts.
    expect(target.bundle.bytes).toBeLessThan(2 * 1024 * 1024);
  });
});
