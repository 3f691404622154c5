import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { pacer } from '@hatchery/core/realtime/budget';
import { connectionStore, type ConnectionStore } from '@hatchery/core/realtime/connections';
import { fanOutLimits, deliverShard, inOnePage, post, type FanOutParts } from '@hatchery/core/realtime/fan-out';
import type { DeliveryLedger } from '@hatchery/core/realtime/ledger';
import { shardStopAt } from '@hatchery/platform/aws/deadlines';
import { dynamoCallers, dynamoClient } from '@hatchery/platform/aws/dynamo';
import { hubConnections, managementApiClient, refusalOf } from '@hatchery/platform/aws/management';
import { report, slackMs, timed } from '../../support/pace';

/**
 * The fan-out against a real HTTP server that plays API Gateway's management
 * API and misbehaves on purpose (slow, throttling), through the service's own
 * SDK client: what reaches each connection, how often, and when a shard
 * returns. The store and the ledger are in memory: their DynamoDB side is
 * tested against dynalite in fan-out.test.ts.
 */

// The SDK's default credential chain takes these first; the clients read their region from the configuration, which needs a database URL.
process.env.AWS_ACCESS_KEY_ID = 'test';
process.env.AWS_SECRET_ACCESS_KEY = 'test';
process.env.DATABASE_URL ??= 'postgres://unused@127.0.0.1:1/unused';

const log = pino({ level: 'silent' });
const frame = '{"type":1,"target":"marketChanged","arguments":[{"count":1,"maxBlock":"1","version":1}]}\u001e';

interface ManagementApi {
  url: string;
  /** Frames applied, by connection id. */
  applied: Map<string, number>;
  /** Posts answered 429. */
  refused: number;
  /** The most posts it held at once. */
  mostAtOnce: number;
  /** Starts the throttle's next one-second window with the next post, as a quiet second would. */
  newWindow(): void;
}

/**
 * A management API answering each post after `latencyMs`, applying at most `perSecond` posts a second (429 with
 * Retry-After beyond); a connection whose id starts with "Gone" is answered 410.
 */
async function managementApi({ latencyMs = 0, perSecond = Number.POSITIVE_INFINITY } = {}): Promise<ManagementApi> {
  let windowStart = 0;
  let inWindow = 0;
  const api: ManagementApi = {
    url: '',
    applied: new Map(),
    refused: 0,
    mostAtOnce: 0,
    newWindow: () => {
      windowStart = Number.NEGATIVE_INFINITY;
    },
  };
  let atOnce = 0;
  const server = createServer(async (request, response: ServerResponse) => {
    api.mostAtOnce = Math.max(api.mostAtOnce, ++atOnce);
    response.on('close', () => atOnce--);
    for await (const _ of request);
    const id = decodeURIComponent(request.url!.split('/@connections/')[1] ?? '');
    const now = performance.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      inWindow = 0;
    }
    if (++inWindow > perSecond) {
      api.refused++;
      response.writeHead(429, { 'content-type': 'application/json', 'x-amzn-errortype': 'LimitExceededException', 'retry-after': '1' });
      response.end(JSON.stringify({ message: 'Rate exceeded' }));
      return;
    }
    if (id.startsWith('Gone')) {
      response.writeHead(410, { 'content-type': 'application/json', 'x-amzn-errortype': 'GoneException' });
      response.end(JSON.stringify({ message: 'Gone' }));
      return;
    }
    api.applied.set(id, (api.applied.get(id) ?? 0) + 1);
    if (latencyMs) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    response.writeHead(200).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prod`;
  return api;
}

const servers: Array<() => void> = [];
afterEach(() => {
  for (const close of servers.splice(0)) close();
});

const ids = (count: number, prefix = 'C') => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(5, '0')}=`);

/** A store whose shard holds `recipients`; gone connections are only counted. */
const storeOf = (recipients: string[]): ConnectionStore =>
  ({
    async *shard() {
      yield recipients;
    },
    remove: async () => undefined,
  }) as unknown as ConnectionStore;

/** The ledger in memory, as DynamoDB's conditional update keeps it. */
function memoryLedger(): DeliveryLedger {
  const claims = new Map<string, { through: string; claimant: string }>();
  return {
    claimedThrough: async (event, shard) => claims.get(`${event} ${shard}`)?.through,
    async claimShard(event, shard, through, claimant) {
      const key = `${event} ${shard}`;
      const claimed = claims.get(key);
      if (claimed && (claimed.through > through || (claimed.through === through && claimed.claimant !== claimant))) return false;
      claims.set(key, { through, claimant });
      return true;
    },
    nextForgeSequence: async () => 1,
    forgeSequence: async () => 0,
    claimFulfilment: async () => true,
  };
}

const twice = (api: ManagementApi) => [...api.applied.values()].filter((count) => count > 1).length;

describe('posts against a slow management API', () => {
  it('fails none of 16 shards × 32 posts sharing 64 sockets at 150 ms a post: a post waits for a socket, it is not failed', async () => {
    const api = await managementApi({ latencyMs: 150 });
    const connections = hubConnections(managementApiClient(api.url, 64), 64);
    const started = Date.now();
    const deliveries = await Promise.all(
      Array.from({ length: 16 }, (_, shard) =>
        post(inOnePage(ids(32, `S${shard}-`)), frame, { store: storeOf([]), connections, concurrency: 32, log, pace: pacer(0) }, started + 20_000),
      ),
    );
    expect(deliveries.reduce((sum, each) => sum + each.failed + each.skipped, 0)).toBe(0);
    expect(deliveries.reduce((sum, each) => sum + each.sent, 0)).toBe(512);
    expect(api.applied.size).toBe(512);
    expect(twice(api)).toBe(0);
  });

  it('sends all 20 posts through 2 sockets at 150 ms a post, two at a time, failing none that waited for its socket', async () => {
    const api = await managementApi({ latencyMs: 150 });
    const connections = hubConnections(managementApiClient(api.url, 2), 2);
    const { value: delivery, ms } = await timed(() =>
      post(inOnePage(ids(20)), frame, { store: storeOf([]), connections, concurrency: 20, log, pace: pacer(0) }),
    );
    expect(delivery).toMatchObject({ sent: 20, failed: 0, skipped: 0 });
    expect(api.mostAtOnce).toBe(2);
    report(`20 posts through 2 sockets at 150 ms a post: ${Math.round(ms)} ms (ten rounds: ${10 * 150} ms)`);
  });
});

describe('posts refused by an outside throttle', () => {
  it('delivers every post once without a budget: a 429 is tried again after its Retry-After, not lost', async () => {
    const api = await managementApi({ perSecond: 100 });
    const connections = hubConnections(managementApiClient(api.url, 16, { paced: true }), 16);
    const delivery = await post(inOnePage(ids(300)), frame, { store: storeOf([]), connections, concurrency: 16, log, pace: pacer(0) }, Date.now() + 20_000);
    expect(api.refused).toBeGreaterThan(0);
    expect(delivery).toMatchObject({ sent: 300, failed: 0, skipped: 0 });
    expect(api.applied.size).toBe(300);
    expect(twice(api)).toBe(0);
  });

  it('remembers across shards what a 429 taught: the next shard on the same pacer starts slower', async () => {
    const api = await managementApi({ perSecond: 50 });
    const connections = hubConnections(managementApiClient(api.url, 8, { paced: true }), 8);
    const pace = pacer(400);
    const parts: FanOutParts = { store: storeOf([]), connections, concurrency: 8, log, pace };
    await post(inOnePage(ids(150, 'A')), frame, parts, Date.now() + 20_000);
    const refusedFirst = api.refused;
    expect(pace.factor).toBeLessThan(1);
    // Both shards meet the throttle from the start of a window: what the first left of its last one is timing, not a lesson.
    api.newWindow();
    await post(inOnePage(ids(150, 'B')), frame, parts, Date.now() + 20_000);
    expect(api.refused - refusedFirst).toBeLessThanOrEqual(refusedFirst);
    expect(twice(api)).toBe(0);
  });

  it('takes a throttled DynamoDB removal of a gone connection for what it is: no pause of the posts, the connection counted gone once', async () => {
    const api = await managementApi();
    let deletes = 0;
    const dynamoDb = createServer(async (request, response) => {
      for await (const _ of request);
      deletes++;
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': 'ThrottlingException' });
      response.end(
        JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' }),
      );
    });
    dynamoDb.listen(0, '127.0.0.1');
    await once(dynamoDb, 'listening');
    servers.push(() => {
      dynamoDb.closeAllConnections();
      dynamoDb.close();
    });
    const store = connectionStore({ client: dynamoClient({ endpoint: `http://127.0.0.1:${(dynamoDb.address() as AddressInfo).port}` }), table: 'hatchery' });
    const pace = pacer(0);
    const connections = hubConnections(managementApiClient(api.url, 4, { paced: true }), 4);
    // The same 20 posts with no gone connection among them, for how long the posts alone take on this machine now.
    const alone = await timed(() => post(inOnePage(ids(20, 'Alone')), frame, { store, connections, concurrency: 1, log, pace }));
    const { value: delivery, ms, lagMs } = await timed(() => post(inOnePage(['Gone1=', ...ids(20)]), frame, { store, connections, concurrency: 1, log, pace }));
    expect(delivery).toMatchObject({ sent: 20, gone: 1, failed: 0, skipped: 0 });
    expect(pace.throttles).toBe(0);
    expect(deletes).toBeGreaterThan(0);
    // The SDK's own retries of the throttled removal (its 1 s throttling base), within the records' deadline, are all
    // it waits beside the posts: no pacer pause on top.
    expect(ms).toBeLessThan(dynamoCallers.records.deadlineMs + alone.ms + slackMs({ lagMs: Math.max(lagMs, alone.lagMs) }));
    expect(api.applied.size).toBe(40);
  });

  it('tells API Gateway’s 429 and a post that never left from a failure that may hide a delivery', () => {
    expect(refusalOf({ name: 'LimitExceededException', $metadata: { httpStatusCode: 429 }, $response: { headers: { 'retry-after': '2' } } })).toMatchObject({
      refused: 'throttled',
      retryAfterMs: 2_000,
    });
    expect(refusalOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toMatchObject({ refused: 'unsent' });
    expect(refusalOf(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBeUndefined();
    expect(refusalOf({ name: 'InternalServerError', $metadata: { httpStatusCode: 500 } })).toBeUndefined();
  });
});

describe('a shard under its deadline', () => {
  it('returns before its invocation ends however slow the pace, skipping at once what cannot go in time', async () => {
    const api = await managementApi({ perSecond: 40 });
    const connections = hubConnections(managementApiClient(api.url, 64, { paced: true }), 64);
    const recipients = ids(300);
    // A 6 s Lambda timeout less the 2 s margin: posting stops 4 s in, at 100 posts a second against an API allowing 40.
    const timeoutMs = 6_000;
    const {
      value: delivery,
      ms,
      lagMs,
    } = await timed(() =>
      deliverShard(
        { event: 'marketChanged#1', shard: 0, frame, postsPerSecond: 100 },
        { store: storeOf(recipients), connections, concurrency: 64, log, pace: pacer(0) },
        memoryLedger(),
        shardStopAt(timeoutMs),
      ),
    );
    // The calls it started before its stop end within the margin, on timers as late as the machine's lag makes them.
    expect(ms).toBeLessThan(timeoutMs + slackMs({ lagMs }));
    expect(delivery.sent + delivery.skipped + delivery.failed).toBe(300);
    expect(delivery.sent).toBe(api.applied.size);
    expect(twice(api)).toBe(0);
  });

  it('resumes after what an invocation claimed when the next one retries the same event: nobody gets the frame twice', async () => {
    const api = await managementApi({ latencyMs: 20 });
    const connections = hubConnections(managementApiClient(api.url, 64), 64);
    const recipients = ids(2_000);
    const ledger = memoryLedger();
    const job = { event: 'marketChanged#7', shard: 3, frame, postsPerSecond: 400 };
    const parts = { store: storeOf(recipients), connections, concurrency: 64, log };
    // The first invocation is cut short (its deadline stands in for Lambda's timeout), the retries carry on from its
    // claims; theirs, 5 times what 2,000 posts at 400 a second take, only end one that hangs.
    const first = await deliverShard(job, { ...parts, pace: pacer(0) }, ledger, Date.now() + 1_000);
    expect(first.sent).toBeGreaterThan(0);
    expect(first.sent).toBeLessThan(2_000);
    const second = await deliverShard(job, { ...parts, pace: pacer(0) }, ledger, Date.now() + 25_000);
    expect(twice(api)).toBe(0);
    expect(first.sent + second.sent).toBe(api.applied.size);
    // What the first claimed but never posted is lost, never sent twice: at most the run it was posting, the next one (claimed while it posted) and one taken ahead.
    expect(2_000 - api.applied.size).toBeLessThanOrEqual(3 * fanOutLimits.claimRun);
    const third = await deliverShard(job, { ...parts, pace: pacer(0) }, ledger, Date.now() + 25_000);
    expect(third.sent).toBe(0);
    expect(twice(api)).toBe(0);
  }, 60_000);
});
