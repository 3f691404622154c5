import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { connectEvents, eventsKeepAliveMs, eventsServerTimeoutMs } from '../../../packages/client/src/events';
import type { NegotiateResponse } from '@hatchery/platform/signalr/protocol';
import { slackMs, slowestOf, watchLag } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { anyVersion, connectHub, indexer, record, sleep, waitFor, wallet, type Hub } from './support';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
const hubs: Hub[] = [];
const store = connectionStore();

const open = async (options: Parameters<typeof connectHub>[1] = {}) => {
  const hub = await connectHub(stack.url, options);
  hubs.push(hub);
  return hub;
};

/**
 * A server timeout short against the 9-minute default, and long against this machine's pace now: 500 ms, or ten of
 * the hub's round trips (the slowest of a few Subscribe calls) when those take longer. A ping's answer is one such
 * round trip.
 */
async function shortServerTimeout(): Promise<{ serverTimeoutMs: number; roundTripMs: number }> {
  const hub = await open();
  try {
    const roundTripMs = await slowestOf(() => hub.invoke('Subscribe', wallet(95)));
    return { serverTimeoutMs: Math.max(500, 10 * roundTripMs), roundTripMs };
  } finally {
    await hub.stop();
  }
}

beforeAll(async () => {
  // The stack starts with no indexer schema at all: its listener must stay silent until the tables appear.
  stack = await startTestStack();
  writes = indexer(stack);
});
afterAll(async () => {
  await Promise.all(hubs.map((hub) => hub.stop()));
  await writes?.end();
  await stack?.stop();
});

describe('POST /hubs/events/negotiate', () => {
  it('answers negotiate version 1 with a WebSocket transport and a connection token', async () => {
    const response = await stack.get('/hubs/events/negotiate?negotiateVersion=1', { method: 'POST' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as NegotiateResponse;
    expect(body).toEqual({
      negotiateVersion: 1,
      connectionId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      connectionToken: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      availableTransports: [{ transport: 'WebSockets', transferFormats: ['Text'] }],
    });
    expect(body.connectionToken).not.toBe(body.connectionId);
  });

  it('answers version 0 without a token, and 422 for a version that is not a number', async () => {
    const v0 = (await (await stack.get('/hubs/events/negotiate', { method: 'POST' })).json()) as NegotiateResponse;
    expect(v0.negotiateVersion).toBe(0);
    expect(v0.connectionToken).toBeUndefined();
    const bad = await stack.get('/hubs/events/negotiate?negotiateVersion=abc', { method: 'POST' });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect(((await bad.json()) as { errors: object }).errors).toHaveProperty('negotiateVersion');
  });
});

describe('events before the indexer has created its tables', () => {
  it('sends nothing while the schema is missing, then marketChanged once listings appear', async () => {
    const hub = await open();
    const market = record(hub, 'marketChanged');
    const readsBefore = stack.listener!.stats().reads;
    stack.listener!.poke();
    // Once the poke's read is done and anything it would send has been sent, nothing came.
    await waitFor(() => stack.listener!.stats().reads > readsBefore, 'the read the poke asked for');
    await stack.listener!.idle();
    expect(market).toEqual([]);
    expect(stack.listener!.stats().failedReads).toBe(0);

    await createIndexerSchema(writes.pool);
    await writes.listToken();
    await waitFor(() => market.length > 0, 'marketChanged after the listings table appeared');
    expect(market).toEqual([{ ...(await writes.snapshot()), ...anyVersion }]);
    expect(market[0]).toEqual({ count: 1, maxBlock: expect.stringMatching(/^[0-9]+$/), version: expect.any(Number) });
  });
});

describe.each([
  { mode: 'through negotiate', skipNegotiation: false },
  { mode: 'with skipNegotiation', skipNegotiation: true },
])('the SignalR client $mode', ({ skipNegotiation }) => {
  let alice: Hub;
  let bob: Hub;
  let carol: Hub;
  const addresses = { alice: wallet(skipNegotiation ? 11 : 1), bob: wallet(skipNegotiation ? 12 : 2) };

  beforeAll(async () => {
    await createIndexerSchema(writes.pool);
    [alice, bob, carol] = await Promise.all([open({ skipNegotiation }), open({ skipNegotiation }), open({ skipNegotiation })]);
    expect(alice.state).toBe('Connected');
    // Mixed case on purpose: groups are named by the lowercased address.
    await alice.invoke('Subscribe', addresses.alice.replace(/a/g, 'A').replace('0X', '0x'));
    await bob.invoke('Subscribe', addresses.bob);
  });

  it('delivers forgeFulfilled only to the buyer’s group', async () => {
    const aliceForge = record(alice, 'forgeFulfilled');
    const bobForge = record(bob, 'forgeFulfilled');
    const carolForge = record(carol, 'forgeFulfilled');
    const forAlice = await writes.fulfilFor(addresses.alice);
    await waitFor(() => aliceForge.length === 1, 'alice’s forgeFulfilled');
    expect(aliceForge).toEqual([forAlice]);

    // Bob's own event comes after Alice's in the listener's order, so had Alice's reached him it would be here first.
    const forBob = await writes.fulfilFor(addresses.bob);
    await waitFor(() => bobForge.length === 1, 'bob’s forgeFulfilled');
    expect(bobForge).toEqual([forBob]);
    expect(aliceForge).toEqual([forAlice]);
    expect(carolForge).toEqual([]);
  });

  it('delivers marketChanged to every client, subscribed or not', async () => {
    const received = [alice, bob, carol].map((hub) => record(hub, 'marketChanged'));
    await writes.listToken();
    const expected = await writes.snapshot();
    await waitFor(() => received.every((events) => events.length === 1), 'marketChanged on all three clients');
    for (const events of received) expect(events).toEqual([{ ...expected, ...anyVersion }]);
    // One event, one version, whoever receives it.
    expect(new Set(received.map(([event]) => (event as { version: number }).version)).size).toBe(1);
  });

  it('stops delivery after Unsubscribe', async () => {
    const aliceForge = record(alice, 'forgeFulfilled');
    const aliceMarket = record(alice, 'marketChanged');
    await alice.invoke('Unsubscribe', addresses.alice);
    await writes.fulfilFor(addresses.alice);
    // A later event on the same connection: the fulfilment, had it been sent, would have arrived before it.
    await writes.listToken();
    await waitFor(() => aliceMarket.length === 1, 'marketChanged after the fulfilment');
    expect(aliceForge).toEqual([]);
    await alice.invoke('Subscribe', addresses.alice);
  });

  it('rejects Subscribe with a bad address with exactly "Invalid address." and keeps the connection', async () => {
    for (const bad of ['nope', '0x123', `${addresses.alice}0`, 42, null]) {
      const error = await alice.invoke('Subscribe', bad).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe('Invalid address.');
    }
    await expect(alice.invoke('Subscribe', addresses.alice)).resolves.toEqual(expect.any(Number));
    expect(alice.state).toBe('Connected');
  });

  it('answers the client’s pings, so a short server timeout never fires', async () => {
    // The client pings every 100 ms and gives up after its short server timeout without a message from the server.
    const { serverTimeoutMs } = await shortServerTimeout();
    const hub = await open({ skipNegotiation, keepAliveMs: 100, serverTimeoutMs });
    let closed: Error | undefined;
    hub.onclose((error) => (closed = error ?? new Error('closed')));
    await sleep(3 * serverTimeoutMs);
    expect(closed).toBeUndefined();
    expect(hub.state).toBe('Connected');
  });
});

describe('Subscribe’s answer', () => {
  it('is the last sequence of the wallet’s forgeFulfilled stream (0 before the first): the next event is numbered one above it', async () => {
    const address = wallet(90);
    const first = await open();
    expect(await first.invoke('Subscribe', address)).toBe(0);
    const forge = record(first, 'forgeFulfilled');
    const fulfilment = await writes.fulfilFor(address);
    await waitFor(() => forge.length === 1, 'the first forgeFulfilled');
    expect(forge).toEqual([{ ...fulfilment, sequence: 1 }]);
    const second = await open();
    expect(await second.invoke('Subscribe', address)).toBe(1);
    expect(await second.invoke('Unsubscribe', address)).toBeUndefined();
  });
});

describe('the typed client’s keepalive', () => {
  it('defaults to a ping every 4 minutes and a 9-minute server timeout, inside API Gateway’s 10-minute idle timeout', () => {
    expect(eventsKeepAliveMs).toBe(4 * 60_000);
    expect(eventsKeepAliveMs).toBeLessThan(webSocketApiQuotas.idleTimeoutMs / 2);
    expect(eventsServerTimeoutMs).toBeGreaterThan(2 * eventsKeepAliveMs);
    expect(eventsServerTimeoutMs).toBeLessThan(webSocketApiQuotas.idleTimeoutMs);
  });

  it('stays connected across several keepalive periods, and knows the hub dead within its server timeout once it stops answering', async () => {
    const before = new Set(stack.hub.connections.keys());
    const { serverTimeoutMs, roundTripMs } = await shortServerTimeout();
    const events = await connectEvents({ baseUrl: stack.url, keepAliveMs: 100, serverTimeoutMs, reconnectDelaysMs: [60_000] });
    try {
      const connection = events.connection as unknown as Hub;
      let lost: number | undefined;
      connection.onreconnecting(() => (lost ??= Date.now()));
      await sleep(3 * serverTimeoutMs);
      expect(lost).toBeUndefined();
      expect(connection.state).toBe('Connected');

      // The hub's side of the connection stops reading: no ping is answered, and the socket stays open.
      const id = [...stack.hub.connections.keys()].find((key) => !before.has(key))!;
      const lag = watchLag();
      const stoppedAt = Date.now();
      stack.hub.connections.get(id)!.socket.pause();
      await waitFor(() => lost !== undefined, 'the client to call the connection dead', 4 * serverTimeoutMs);
      // Its timer runs from the last message, which a ping answered just before the pause may bring a round trip late.
      expect(lost! - stoppedAt).toBeLessThanOrEqual(serverTimeoutMs + slackMs({ lagMs: lag.stop(), roundTripMs }));
    } finally {
      await events.close();
    }
  });
});

describe('connections in DynamoDB', () => {
  it('keeps a connection and its groups while connected and removes them on disconnect', async () => {
    const before = new Set(await ids(store.all()));
    const hub = await open();
    const address = wallet(77);
    await hub.invoke('Subscribe', address);
    const mine = (await ids(store.all())).filter((id) => !before.has(id));
    expect(mine).toHaveLength(1);
    expect(await ids(store.group(address))).toEqual(mine);

    await hub.stop();
    await waitFor(async () => (await ids(store.group(address))).length === 0, 'the group item to go');
    expect(await ids(store.all())).not.toContain(mine[0]);
  });

  it('refuses more subscriptions than one connection may hold', async () => {
    const hub = await open();
    await Promise.all(Array.from({ length: 100 }, (_, i) => hub.invoke('Subscribe', wallet(1_000 + i))));
    await expect(hub.invoke('Subscribe', wallet(2_000))).rejects.toThrow('Too many subscriptions on this connection.');
    // Re-subscribing an address it already has is not a new subscription.
    await expect(hub.invoke('Subscribe', wallet(1_000))).resolves.toBe(0);
  });
});

async function ids(pages: AsyncIterable<string[]>): Promise<string[]> {
  const all: string[] = [];
  for await (const page of pages) all.push(...page);
  return all;
}
