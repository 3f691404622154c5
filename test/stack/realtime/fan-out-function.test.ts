import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricCatalog, type MetricName } from '@hatchery/platform/telemetry/metrics';
import { connectionStore, shardOf } from '@hatchery/core/realtime/connections';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { fanOutHandler } from '@hatchery/functions/routes/realtime';
import type { EmfDocument } from '@hatchery/local/metrics';
import { connectHub, record, waitFor, type Hub } from './support';
import { startTestStack, type TestStack } from '../../support/stack';
import { bundleHandlers, probe, stackBacking, tracingEnvironment, xrayDaemon, type HandlerBundle } from '../../support/bundles';
import { parseEmf } from '../../support/emf';

/**
 * The fan-out function, bundled as deployed, invoked in fresh processes with
 * the environment Lambda gives a function with active tracing, for the shard
 * of a live hub connection (the local gateway's management API) and of a
 * connection record API Gateway no longer knows: its EMF lines on stdout and
 * the segments a UDP socket standing in for the X-Ray daemon receives.
 */
let stack: TestStack;
let workdir: string;
let bundle: HandlerBundle;
let daemon: Awaited<ReturnType<typeof xrayDaemon>>;
let hub: Hub;
let shard: number;

beforeAll(async () => {
  stack = await startTestStack();
  workdir = mkdtempSync(join(tmpdir(), 'hatchery-fan-out-'));
  bundle = (await bundleHandlers([fanOutHandler], workdir))[0]!;
  daemon = await xrayDaemon();
  const before = new Set(stack.hub.connections.keys());
  hub = await connectHub(stack.url);
  const id = [...stack.hub.connections.keys()].find((each) => !before.has(each))!;
  shard = shardOf(id);
  // $default marks the connection ready just after answering the handshake: from then on shard reads return it.
  await waitFor(async () => (await idsIn(shard)).includes(id), 'the connection ready in its shard');
}, 120_000);

async function idsIn(wanted: number): Promise<string[]> {
  const found: string[] = [];
  for await (const page of connectionStore().shard(wanted)) found.push(...page);
  return found;
}

afterAll(async () => {
  await hub?.stop();
  await daemon?.close();
  await stack?.stop();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

const namespace = 'Hatchery/test';
const environment = () => ({
  ...stackBacking(stack),
  ...tracingEnvironment(daemon.port),
  WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url,
  METRICS_NAMESPACE: namespace,
  LOG_LEVEL: 'silent',
});

/** A connection id in `shard` that the management API does not know (a client gone without its $disconnect). */
function goneIdIn(wanted: number): string {
  for (let i = 0; ; i++) {
    const id = `Gone${String(i).padStart(10, '0')}=`;
    if (shardOf(id) === wanted) return id;
  }
}

const emfOf = (stdout: string): EmfDocument[] => stdout.split('\n').flatMap((line) => parseEmf(line) ?? []);
const names = (document: EmfDocument) => document._aws.CloudWatchMetrics.flatMap((directive) => directive.Metrics.map((metric) => metric.Name));

type Segment = { id: string; parent_id?: string; name: string; aws?: { operation?: string }; subsegments?: Segment[]; annotations?: Record<string, unknown> };
const flatten = (segments: Segment[]): Segment[] => segments.flatMap((segment) => [segment, ...flatten(segment.subsegments ?? [])]);

describe('the fan-out function’s metrics and traces', () => {
  it('publishes one document per shard under [service, kind]: posts sent, gone and failed under the listener’s names, its time, posts skipped', async () => {
    const gone = goneIdIn(shard);
    await connectionStore().add(gone, Date.now());
    await connectionStore().join(gone);
    const market = record(hub, 'marketChanged');
    const payload = { count: 41, maxBlock: '4141', version: 41 };
    const { probe: result, stdout } = await probe(bundle, { event: 'marketChanged#1', shard, frame: marketChangedMessage(payload) }, environment());
    expect(result.error).toBeUndefined();
    await waitFor(() => market.some((each) => JSON.stringify(each) === JSON.stringify(payload)), 'the frame at the client');

    const documents = emfOf(stdout);
    const shardDocument = documents.find((document) => 'FanOutShardTime' in document)!;
    expect(shardDocument, stdout).toBeDefined();
    const [directive] = shardDocument._aws.CloudWatchMetrics;
    expect(directive!.Namespace).toBe(namespace);
    expect(directive!.Dimensions).toEqual([['service', 'kind']]);
    expect(shardDocument).toMatchObject({ service: 'hatchery', kind: 'marketChanged' });
    expect(names(shardDocument).sort()).toEqual([
      'FanOutShardTime',
      'FanOutSkippedPosts',
      'ListenerFailedPosts',
      'ListenerGoneConnections',
      'ListenerPostsSent',
      'UndeliveredPosts',
    ]);
    for (const metric of directive!.Metrics) expect(metric.Unit, metric.Name).toBe(metricCatalog[metric.Name as MetricName].unit);
    expect(shardDocument).toMatchObject({ ListenerPostsSent: 1, ListenerGoneConnections: 1, ListenerFailedPosts: 0, FanOutSkippedPosts: 0 });
    expect(shardDocument.FanOutShardTime).toBeGreaterThan(0);
    // The gone connection was removed, as the count says.
    expect(await idsIn(shard)).not.toContain(gone);
    // A first invocation is a cold start: Powertools' own document, with the function's name (the probe's context names it `probe`).
    const coldStart = documents.find((document) => 'ColdStart' in document)!;
    expect(coldStart).toMatchObject({ ColdStart: 1, service: 'hatchery', function_name: 'probe' });
  }, 90_000);

  // Found by this test: Powertools' user-agent middleware made every post through the management client fail once traced.
  it('traces the invocation: a handler subsegment holding the shard’s DynamoDB read and each post through the management API', async () => {
    daemon.documents.length = 0;
    const market = record(hub, 'marketChanged');
    const { probe: result, stdout } = await probe(
      bundle,
      { event: 'marketChanged#2', shard, frame: marketChangedMessage({ count: 42, maxBlock: '4242', version: 1 }) },
      environment(),
    );
    expect(result.error).toBeUndefined();
    expect(emfOf(stdout).find((document) => 'FanOutShardTime' in document)).toMatchObject({ ListenerPostsSent: 1, ListenerFailedPosts: 0 });
    await waitFor(() => market.some((each) => each.count === 42), 'the frame at the client');
    await waitFor(() => flatten(daemon.documents as Segment[]).some((segment) => segment.name === '## index.handler'), 'the handler’s subsegment');
    const segments = flatten(daemon.documents as Segment[]);
    const handler = segments.find((segment) => segment.name === '## index.handler')!;
    expect(handler.annotations).toMatchObject({ ColdStart: true, Service: 'hatchery' });
    // The first calls arrive inside the handler's document, any later ones apart, naming it as their parent.
    const inside = [...(handler.subsegments ?? []), ...segments.filter((segment) => segment.parent_id === handler.id)];
    expect(inside.filter((segment) => segment.name === 'DynamoDB').map((segment) => segment.aws?.operation)).toContain('Query');
    expect(inside.filter((segment) => segment.aws?.operation === 'PostToConnection')).toHaveLength(1);
  }, 90_000);

  it('publishes no shard figures for an invocation that fails before posting (Lambda counts it in Errors, and retries it)', async () => {
    const { probe: result, stdout } = await probe(
      bundle,
      { event: 'marketChanged#3', shard: -1, frame: marketChangedMessage({ count: 1, maxBlock: '1', version: 1 }) },
      environment(),
    );
    expect(result.error).toMatch(/shard/);
    expect(emfOf(stdout).filter((document) => 'FanOutShardTime' in document || 'ListenerPostsSent' in document)).toEqual([]);
  }, 90_000);
});
