import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FanOutBudget } from '@hatchery/core/realtime/budget';
import { connectionShards, type ConnectionStore } from '@hatchery/core/realtime/connections';
import { forgeFulfilledMessage, marketChangedMessage } from '@hatchery/core/realtime/events';
import type { ShardJob } from '@hatchery/core/realtime/fan-out';
import type { DeliveryLedger } from '@hatchery/core/realtime/ledger';
import type { HubConnections } from '@hatchery/platform/aws/management';
import { createMetrics, setEmfSink, type EmfOutput } from '@hatchery/platform/telemetry/metrics';
import { broadcaster, type BroadcasterParts, type DeliveryCounters } from '@hatchery/listener/broadcaster';
import { listenerMetrics } from '@hatchery/listener/metrics';
import type { ShardInvoker } from '@hatchery/listener/shards';

/**
 * The listener's two ways out, with its collaborators in memory: a connection
 * store that reads as DynamoDB does (a peek of `limit` records is complete
 * only when it ends short of the limit), a management API that records each
 * frame, a shard invoker that records each job, and the ledger's claims.
 */

const log = pino({ level: 'silent' });
const decoder = new TextDecoder();
const noBudget: FanOutBudget = { postsPerSecond: 0, minIntervalMs: 0 };
/** 2 connections a shard at most are posted by the listener itself. */
const smallAudience = 2 * connectionShards;

/** A store holding `byShard`'s connections (shard → ids) and `groups`' (address → ids); the ids removed are kept. */
function memoryStore(byShard: Record<number, string[]>, groups: Record<string, string[]> = {}) {
  const removed: string[] = [];
  const peeked: number[] = [];
  const store = {
    async peek(shard: number, limit: number) {
      peeked.push(limit);
      if (byShard[shard] === null) throw new Error(`shard ${shard} cannot be read`);
      const ids = byShard[shard] ?? [];
      return { ids: ids.slice(0, limit), complete: ids.length < limit };
    },
    async *group(address: string) {
      if (groups[address]?.length) yield groups[address];
    },
    async remove(id: string) {
      removed.push(id);
    },
  } as unknown as ConnectionStore;
  return { store, removed, peeked };
}

/** A management API that applies every post, answers gone for an id that starts with "Gone", and fails one that starts with "Fail" (a 5xx). */
function managementApi() {
  const posted: { id: string; frame: string }[] = [];
  const connections: HubConnections = {
    async post(id, data) {
      if (id.startsWith('Gone')) return 'gone';
      if (id.startsWith('Fail')) throw Object.assign(new Error('internal failure'), { $metadata: { httpStatusCode: 500 } });
      posted.push({ id, frame: typeof data === 'string' ? data : decoder.decode(data) });
      return 'sent';
    },
    close: async () => undefined,
  };
  return { connections, posted };
}

/** A shard invoker that answers each job as if its shard had `sentPerShard` connections, and fails the shards in `failing`. */
function recordingInvoker({ sentPerShard = 10, skippedPerShard = 0, paceFactor = 1, failing = [] as number[], postsHere = false } = {}) {
  const jobs: ShardJob[] = [];
  const invoke = Object.assign(
    async (job: ShardJob) => {
      jobs.push(job);
      if (failing.includes(job.shard)) throw new Error(`shard ${job.shard} failed`);
      return { sent: sentPerShard, gone: 0, failed: 0, skipped: skippedPerShard, paceFactor };
    },
    { postsHere },
  ) satisfies ShardInvoker;
  return { invoke, jobs };
}

/** The ledger's buyer streams and fulfilment claims, as its conditional writes keep them. */
function memoryLedger(): DeliveryLedger {
  const sequences = new Map<string, number>();
  const claimed = new Set<string>();
  return {
    claimedThrough: async () => undefined,
    claimShard: async () => true,
    async nextForgeSequence(buyer) {
      const next = (sequences.get(buyer) ?? 0) + 1;
      sequences.set(buyer, next);
      return next;
    },
    forgeSequence: async (buyer) => sequences.get(buyer) ?? 0,
    async claimFulfilment(buyer, requestId) {
      const key = `${buyer} ${requestId}`;
      if (claimed.has(key)) return false;
      claimed.add(key);
      return true;
    },
  };
}

const newCounters = (): DeliveryCounters => ({ marketChanged: 0, forgeFulfilled: 0, sent: 0, gone: 0, undelivered: 0, shardsHanded: 0, failedShards: 0 });

let documents: EmfOutput[];
beforeEach(() => {
  documents = [];
  setEmfSink((document) => documents.push(document));
});
afterEach(() => setEmfSink(undefined));

/** A broadcaster over these parts, with its counters. */
function broadcasterOf(parts: Partial<BroadcasterParts> & Pick<BroadcasterParts, 'store'>) {
  const counters = newCounters();
  const out = broadcaster(
    {
      connections: managementApi().connections,
      forgeConnections: managementApi().connections,
      shards: recordingInvoker().invoke,
      ledger: memoryLedger(),
      budget: noBudget,
      fanOutConcurrency: 4,
      smallAudience,
      shardConcurrency: 4,
      log,
      ...parts,
    },
    listenerMetrics(createMetrics()),
    counters,
  );
  return { out, counters };
}

const listings = { count: 3, maxBlock: '42' };
const versions = (first: number) => {
  let next = first;
  return async () => next++;
};

describe('a broadcast', () => {
  it('numbers marketChanged as it starts, posts the small shards itself with the ids it read, and hands each large shard out', async () => {
    const { store, peeked } = memoryStore({ 0: ['A1', 'A2'], 3: ['B1'], 5: ['C1', 'C2', 'C3'], 9: ['D1', 'D2', 'D3', 'D4'] });
    const api = managementApi();
    const shards = recordingInvoker();
    const { out, counters } = broadcasterOf({ store, connections: api.connections, shards: shards.invoke });
    expect(await out.broadcast(listings, versions(7))).toBe(true);

    const frame = marketChangedMessage({ ...listings, version: 7 });
    expect(api.posted.map(({ id }) => id).sort()).toEqual(['A1', 'A2', 'B1']);
    for (const { frame: sent } of api.posted) expect(sent).toBe(frame);
    // One more than a small shard holds: the read ends short of it exactly when the shard is small.
    expect(new Set(peeked)).toEqual(new Set([3]));
    expect(shards.jobs.map(({ shard }) => shard).sort((a, b) => a - b)).toEqual([5, 9]);
    for (const job of shards.jobs) expect(job).toEqual({ event: 'marketChanged#7', shard: job.shard, frame });
    expect(counters).toEqual({ ...newCounters(), marketChanged: 1, sent: 3 + 2 * 10, shardsHanded: 2 });
  });

  it('numbers each broadcast anew, so the versions clients see grow by one', async () => {
    const { store } = memoryStore({ 1: ['A1'] });
    const api = managementApi();
    const { out } = broadcasterOf({ store, connections: api.connections });
    const next = versions(1);
    await out.broadcast(listings, next);
    await out.broadcast({ count: 2, maxBlock: '43' }, next);
    expect(api.posted.map(({ frame }) => JSON.parse(frame.slice(0, -1)).arguments[0].version)).toEqual([1, 2]);
  });

  it('counts gone connections and removes them; the event metrics count only its own posts', async () => {
    const { store, removed } = memoryStore({ 2: ['A1', 'Gone1'], 4: ['B1', 'B2', 'B3'] });
    const { out, counters } = broadcasterOf({ store });
    await out.broadcast(listings, versions(1));
    expect(removed).toEqual(['Gone1']);
    expect(counters).toMatchObject({ sent: 1 + 10, gone: 1, undelivered: 0 });
    const [event] = documents;
    expect(event).toMatchObject({ kind: 'marketChanged', ListenerEvents: 1, ListenerPostsSent: 1, ListenerGoneConnections: 1 });
  });

  it('goes on with the other shards when one cannot be read or handed out, and counts each as a failed shard', async () => {
    const { store } = memoryStore({ 1: null as unknown as string[], 2: ['A1'], 6: ['B1', 'B2', 'B3'], 7: ['C1', 'C2', 'C3'] });
    const shards = recordingInvoker({ failing: [6] });
    const { out, counters } = broadcasterOf({ store, shards: shards.invoke });
    expect(await out.broadcast(listings, versions(1))).toBe(false);
    expect(counters).toMatchObject({ marketChanged: 1, sent: 1 + 10, failedShards: 2, shardsHanded: 2 });
  });

  it('says it reached every connection only when no post was left undelivered: a gone connection is reached, a failed post or a skipped one is not', async () => {
    const reached = (parts: Parameters<typeof broadcasterOf>[0]) => broadcasterOf(parts).out.broadcast(listings, versions(1));
    expect(await reached({ store: memoryStore({ 2: ['A1', 'Gone1'] }).store })).toBe(true);
    expect(await reached({ store: memoryStore({ 2: ['A1', 'Fail1'] }).store })).toBe(false);
    expect(await reached({ store: memoryStore({ 6: ['B1', 'B2', 'B3'] }).store, shards: recordingInvoker().invoke })).toBe(true);
    expect(await reached({ store: memoryStore({ 6: ['B1', 'B2', 'B3'] }).store, shards: recordingInvoker({ skippedPerShard: 1 }).invoke })).toBe(false);
  });

  it('counts the posts of shards posted in this process as its own, and none as handed', async () => {
    const { store } = memoryStore({ 5: ['C1', 'C2', 'C3'] });
    const shards = recordingInvoker({ postsHere: true });
    const { out, counters } = broadcasterOf({ store, shards: shards.invoke });
    await out.broadcast(listings, versions(1));
    expect(counters).toMatchObject({ sent: 10, shardsHanded: 0 });
    expect(documents[0]).toMatchObject({ kind: 'marketChanged', ListenerPostsSent: 10 });
  });

  it('without a budget, hands out shards with no rate, and lets the next broadcast start at once', async () => {
    const { store } = memoryStore({ 5: ['C1', 'C2', 'C3'] });
    const shards = recordingInvoker();
    const { out } = broadcasterOf({ store, shards: shards.invoke });
    const before = performance.now();
    await out.broadcast(listings, versions(1));
    expect(shards.jobs[0]).not.toHaveProperty('postsPerSecond');
    expect(out.nextBroadcastAt).toBeGreaterThanOrEqual(before);
    expect(out.nextBroadcastAt).toBeLessThanOrEqual(performance.now());
  });

  it('under a budget, gives each handed shard its part of the broadcast share, and starts the next broadcast once this audience has had its time', async () => {
    // 100 posts a second: 90 for broadcasts, split between the two shards posting at once.
    const budget: FanOutBudget = { postsPerSecond: 100, minIntervalMs: 0 };
    const { store } = memoryStore({ 5: ['C1', 'C2', 'C3'], 6: ['D1', 'D2', 'D3'], 7: ['E1', 'E2', 'E3'] });
    const shards = recordingInvoker({ sentPerShard: 30 });
    const { out } = broadcasterOf({ store, shards: shards.invoke, budget, shardConcurrency: 2 });
    const before = performance.now();
    await out.broadcast(listings, versions(1));
    const after = performance.now();
    expect(shards.jobs.map((job) => job.postsPerSecond)).toEqual([45, 45, 45]);
    // 90 connections at 90 a second: a second from the broadcast's start.
    expect(out.nextBroadcastAt).toBeGreaterThanOrEqual(before + 1000);
    expect(out.nextBroadcastAt).toBeLessThanOrEqual(after + 1000);
  });

  it('starts the next broadcast no sooner than the minimum interval, however small the audience', async () => {
    const { store } = memoryStore({ 1: ['A1'] });
    const { out } = broadcasterOf({ store, budget: { postsPerSecond: 0, minIntervalMs: 60_000 } });
    const before = performance.now();
    await out.broadcast(listings, versions(1));
    expect(out.nextBroadcastAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(out.nextBroadcastAt).toBeLessThanOrEqual(performance.now() + 60_000);
  });
});

describe('a fulfilment', () => {
  const buyer = `0x${'b1'.repeat(20)}`;
  const fulfilment = { requestId: '900001', buyer, tokenId: '11', editionId: '2', block: '10' };

  it("goes to the buyer's group alone, numbered in the buyer's stream, through the targeted connections, not the broadcast's", async () => {
    const { store } = memoryStore({ 0: ['A1'] }, { [buyer]: ['T1', 'T2'] });
    const broadcastApi = managementApi();
    const forgeApi = managementApi();
    const { out, counters } = broadcasterOf({ store, connections: broadcastApi.connections, forgeConnections: forgeApi.connections });
    await out.fulfil(fulfilment);
    await out.fulfil({ ...fulfilment, requestId: '900002' });

    expect(broadcastApi.posted).toEqual([]);
    expect(forgeApi.posted.map(({ id }) => id)).toEqual(['T1', 'T2', 'T1', 'T2']);
    expect(forgeApi.posted[0]!.frame).toBe(forgeFulfilledMessage({ ...fulfilment, sequence: 1 }));
    expect(forgeApi.posted[2]!.frame).toBe(forgeFulfilledMessage({ ...fulfilment, requestId: '900002', sequence: 2 }));
    expect(counters).toMatchObject({ forgeFulfilled: 2, sent: 4, marketChanged: 0 });
    expect(documents.map((document) => [document.kind, document.ListenerPostsSent])).toEqual([
      ['forgeFulfilled', 2],
      ['forgeFulfilled', 2],
    ]);
  });

  it('is sent once: a leader that reads the same fulfilment again finds its claim and posts nothing', async () => {
    const { store } = memoryStore({}, { [buyer]: ['T1'] });
    const forgeApi = managementApi();
    const ledger = memoryLedger();
    const first = broadcasterOf({ store, forgeConnections: forgeApi.connections, ledger });
    const next = broadcasterOf({ store, forgeConnections: forgeApi.connections, ledger });
    await first.out.fulfil(fulfilment);
    await next.out.fulfil(fulfilment);
    expect(forgeApi.posted.map(({ id }) => id)).toEqual(['T1']);
    expect(next.counters).toMatchObject({ forgeFulfilled: 0, sent: 0 });
  });
});
