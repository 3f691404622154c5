import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf } from '@hatchery/core/realtime/connections';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { fanOutHandler } from '@hatchery/functions/routes/realtime';
import { startTestStack, type TestStack } from '../support/stack';
import { connectHub, record, waitFor, type Hub } from '../realtime/support';
import { bundleHandlers, printColdStarts, probe, type Bundle } from './cold-start';

/**
 * The fan-out function bundled as SST bundles every function (see
 * bundles.test.ts), then imported and invoked once in a fresh process whose
 * only configuration is what Lambda and SST give it, for the shard of a live
 * hub connection of the local stack.
 */
let stack: TestStack;
let workdir: string;
let bundle: Bundle;
let hub: Hub;

beforeAll(async () => {
  stack = await startTestStack();
  workdir = mkdtempSync(join(tmpdir(), 'hatchery-fan-out-bundle-'));
  bundle = (await bundleHandlers([fanOutHandler], join(workdir, 'bundles'))).get(fanOutHandler)!;
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
    const payload = { count: 7, maxBlock: '77' };
    const fn = {
      key: 'FanOut',
      via: 'function' as const,
      args: { handler: fanOutHandler, environment: { WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url } },
    };
    const backing = {
      databaseUrl: stack.databaseUrl,
      dynamoEndpoint: stack.dynamoEndpoint,
      managementEndpoint: stack.url,
      tableName: process.env.DYNAMODB_TABLE ?? 'hatchery',
      idpProjectId: 'unused',
    };
    const result = await probe(fn, bundle, backing, workdir, {
      event: { shard: shardOf(id!), frame: marketChangedMessage(payload) },
      // What infra links to every function (the configuration validates the database URL even where it is not used).
      links: { Table: { name: backing.tableName }, DatabaseUrl: { value: stack.databaseUrl } },
    });
    printColdStarts([{ key: fn.key, handler: fanOutHandler, bundle, probe: result }]);
    expect(result.error).toBeUndefined();
    expect(result.result).toEqual({ sent: 1, gone: 0, failed: 0, skipped: 0 });
    await waitFor(() => market.length === 1, 'the frame at the client');
    expect(market).toEqual([payload]);
    // The hub's functions carry the same SDK clients; this one adds nothing else of weight.
    expect(bundle.bytes).toBeLessThan(2 * 1024 * 1024);
  });
});
