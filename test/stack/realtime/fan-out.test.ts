import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { config } from '@hatchery/platform/config';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MiddlewareStack } from '@smithy/types';
import { dynamoClient as newDynamoClient } from '@hatchery/platform/aws/dynamo';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import { ensureTable } from '@hatchery/platform/aws/table';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { connectionShards, connectionStore, shardOf, shards } from '@hatchery/core/realtime/connections';
import { marketChangedMessage, type MarketChanged } from '@hatchery/core/realtime/events';
import { fanOutLimits, deliverShard, type FanOutParts } from '@hatchery/core/realtime/fan-out';
import { pacer } from '@hatchery/core/realtime/budget';
import { deliveryLedger } from '@hatchery/core/realtime/ledger';
import { randomUUID } from 'node:crypto';
import { hubConnections, managementApiClient, type HubConnections } from '@hatchery/platform/aws/management';
import { Listener, type ListenerOptions } from '@hatchery/listener/listener';
import { functionShards } from '@hatchery/listener/shards';
import { isHandshakeAnswer, managementProxy } from '../../support/management-proxy';
import { startTestStack, type TestStack } from '../../support/stack';
import { failOnce } from './flaky-shard';
import { anyVersion, connectHub, indexer, listingsOf, record, versionsGrow, waitFor, wallet, type Hub } from './support';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

/**
 * The sharded fan-out against the real parts: dynalite, the local gateway's
 * management API and WebSocket clients (the stock SignalR client), the
 * service's own AWS clients, and the local Lambda service running the fan-out
 * function in worker threads.
 */
let stack: TestStack;
let writes: ReturnType<typeof indexer>;
const log = pino({ level: 'silent' });
const flaky = 'flaky-fanout';
/** A guard, not a measure: tens of real clients through worker threads take a while on a loaded machine. */
const slow = 120_000;

/** DynamoDB and management API clients of the test's own, counting the calls they make. */
const calls = { Query: 0, PostToConnection: 0 };
let dynamoClient: DynamoDBDocumentClient;
/** The SDK's client, for what the service itself never does: creating a table. */
let admin: DynamoDBClient;
let store: ReturnType<typeof connectionStore>;
let connections: HubConnections;
const parts = (): FanOutParts => ({ store, connections, concurrency: fanOutLimits.concurrency, log, pace: pacer(0) });
/** A shard's job for a new event, so the ledger holds no claim of it yet. */
const job = (shard: number, frame: string) => ({ event: `test#${randomUUID()}`, shard, frame });

/** The client, counting its calls (each once, whatever its retries) of the operations in `calls`. */
function counting<Client extends { middlewareStack: MiddlewareStack<any, any> }>(client: Client): Client {
  client.middlewareStack.add(
    (next, context) => (args) => {
      const operation = String(context.commandName).replace(/Command$/, '');
      if (operation in calls) calls[operation as keyof typeof calls]++;
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return client;
}

interface Client {
  hub: Hub;
  /** The id API Gateway (the local gateway) gave the connection. */
  id: string;
  market: MarketChanged[];
}

const clients: Client[] = [];
const ledger = () => deliveryLedger({ client: dynamoClient });

/**
 * A SignalR client, and the gateway's id for it (connections are opened one
 * at a time, so the new id is the one not seen before), once broadcasts reach it.
 */
async function connect(): Promise<Client> {
  const before = new Set(stack.hub.connections.keys());
  const hub = await connectHub(stack.url);
  const id = [...stack.hub.connections.keys()].find((key) => !before.has(key))!;
  await waitFor(async () => (await ids(store.shard(shardOf(id)))).includes(id), 'the handshaken connection in its shard');
  const client = { hub, id, market: record<MarketChanged>(hub, 'marketChanged') };
  clients.push(client);
  return client;
}

async function ids(pages: AsyncIterable<string[]>): Promise<string[]> {
  const found: string[] = [];
  for await (const page of pages) found.push(...page);
  return found;
}

let event = 0;
/** A frame no other test sends, so each client's count of it is exact. */
const uniqueFrame = () => {
  const payload = { count: ++event, maxBlock: String(9_000_000 + event), version: event };
  return { payload, frame: marketChangedMessage(payload) };
};

/** Events equal to the payload: a frame sent as is, or (with no version given) the listings a listener reported. */
const received = (client: Client, payload: Omit<MarketChanged, 'version'> & { version?: number }) =>
  client.market.filter((each) => JSON.stringify(payload.version === undefined ? listingsOf(each) : each) === JSON.stringify(payload)).length;

beforeAll(async () => {
  stack = await startTestStack({
    functions: {
      [flaky]: { handler: 'test/stack/realtime/flaky-shard.handler', timeoutMs: deliveryDeadlines.shardTimeoutMs, retries: deliveryDeadlines.shardRetries },
    },
  });
  // These tests drive the fan-out themselves; the stack's listener would compete for the lock.
  await stack.listener?.stop();
  writes = indexer(stack);
  dynamoClient = counting(newDynamoClient({ endpoint: stack.dynamoEndpoint }));
  admin = new DynamoDBClient({ endpoint: stack.dynamoEndpoint, region: config().AWS_REGION });
  store = connectionStore({ client: dynamoClient });
  connections = hubConnections(counting(managementApiClient(stack.url)));
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.hub.stop()));
  await writes?.end();
  await stack?.stop();
});

describe('the sharded connection store', () => {
  it('spreads connection ids evenly over the shards, the same way in every process', () => {
    const counts = new Array<number>(connectionShards).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOf(`${createHash('sha256').update(String(i)).digest('base64').slice(0, 15)}=`)]!++;
    // 1,000 expected per shard; a binomial count strays beyond ±15% with odds far below one in a million.
    for (const count of counts) expect(count).toBeGreaterThan(850);
    for (const count of counts) expect(count).toBeLessThan(1_150);
    expect(shardOf('AbCdEfGhIjKlMnO=')).toBe(shardOf('AbCdEfGhIjKlMnO='));
  });

  it('registers, subscribes, expires and removes each connection in its own shard only', async () => {
    const id = 'ShardedConnId1=';
    const shard = shardOf(id);
    await store.add(id, Date.now());
    // Until its handshake is answered a connection gets no broadcast: a SignalR client fails on any other first message.
    expect(await ids(store.shard(shard))).not.toContain(id);
    expect((await store.peek(shard, 1_000)).ids).not.toContain(id);
    await store.join(id);
    expect(await store.subscribe(id, wallet(41))).toBe('subscribed');
    for (const other of shards) expect((await ids(store.shard(other))).includes(id)).toBe(other === shard);
    expect(await ids(store.group(wallet(41)))).toEqual([id]);

    await store.remove(id);
    expect(await ids(store.shard(shard))).not.toContain(id);
    expect(await ids(store.group(wallet(41)))).toEqual([]);

    // Past API Gateway's 2-hour lifetime the record is expired, and reads skip it until DynamoDB's TTL deletes it.
    const stale = 'StaleConnectn1=';
    await store.add(stale, Date.now() - webSocketApiQuotas.connectionLifetimeMs - 1_000);
    await store.join(stale);
    expect(await ids(store.shard(shardOf(stale)))).not.toContain(stale);
    expect((await store.peek(shardOf(stale), 1_000)).ids).not.toContain(stale);
  });
});

describe('one shard’s fan-out (the fan-out function’s work)', () => {
  afterEach(() => {
    calls.Query = 0;
    calls.PostToConnection = 0;
  });

  it('posts to every live connection of its shard once, to no other shard, and removes the gone ones', async () => {
    while (clients.length < 24) await connect();
    const shard = shardOf(clients[0]!.id);
    // Records API Gateway no longer knows (a $disconnect that never came), in the same shard, one of them in a group.
    const ghosts = Array.from({ length: 200 }, (_, i) => `Ghost${String(i).padStart(10, '0')}=`).filter((id) => shardOf(id) === shard);
    for (const ghost of ghosts) {
      await store.add(ghost, Date.now());
      await store.join(ghost);
    }
    await store.subscribe(ghosts[0]!, wallet(42));

    const { payload, frame } = uniqueFrame();
    const delivery = await deliverShard(job(shard, frame), parts(), ledger());
    const mine = clients.filter((client) => shardOf(client.id) === shard);
    await waitFor(() => mine.every((client) => received(client, payload) === 1), 'every client of the shard');

    expect(delivery).toEqual({ sent: mine.length, gone: ghosts.length, failed: 0, skipped: 0, paceFactor: 1 });
    expect(calls.PostToConnection).toBe(mine.length + ghosts.length);
    const remaining = await ids(store.shard(shard));
    expect(remaining.filter((id) => id.startsWith('Ghost'))).toEqual([]);
    expect(await ids(store.group(wallet(42)))).toEqual([]);
    // The others are untouched: checked after a second fan-out to this shard has arrived, which orders the frames before it.
    const next = uniqueFrame();
    await deliverShard(job(shard, next.frame), parts(), ledger());
    await waitFor(() => mine.every((client) => received(client, next.payload) === 1), 'the second fan-out');
    for (const client of clients) expect(received(client, payload)).toBe(shardOf(client.id) === shard ? 1 : 0);
  });

  it('costs one read and no post for a shard with no connections', async () => {
    const table = 'hatchery-empty';
    await ensureTable(admin, table);
    const empty = connectionStore({ client: dynamoClient, table });
    const delivery = await deliverShard(job(3, uniqueFrame().frame), { ...parts(), store: empty }, ledger());
    expect(delivery).toEqual({ sent: 0, gone: 0, failed: 0, skipped: 0, paceFactor: 1 });
    expect(calls).toEqual({ Query: 1, PostToConnection: 0 });
  });

  it('fails before its first post when the shard cannot be read, so a retry sends nobody anything twice', async () => {
    const missing = connectionStore({ client: dynamoClient, table: 'no-such-table' });
    await expect(deliverShard(job(shardOf(clients[0]!.id), uniqueFrame().frame), { ...parts(), store: missing }, ledger())).rejects.toThrow(
      /non-existent table|not found/i,
    );
    expect(calls.PostToConnection).toBe(0);
  });

  it('delivers once to the connections it read when one leaves and another joins during the fan-out', async () => {
    const shard = shardOf(clients[0]!.id);
    const mine = clients.filter((client) => shardOf(client.id) === shard);
    const leaving = mine.at(-1)!;
    let joined: Client | undefined;
    // The churn happens after the shard was read and before its first post: the read list is stale by one in each direction.
    let churned = false;
    const churning: HubConnections = {
      async post(connectionId, data) {
        if (!churned) {
          churned = true;
          await leaving.hub.stop();
          joined = await connect();
        }
        return connections.post(connectionId, data);
      },
      close: (connectionId) => connections.close(connectionId),
    };
    const { payload, frame } = uniqueFrame();
    const delivery = await deliverShard(job(shard, frame), { ...parts(), connections: churning }, ledger());
    const staying = mine.filter((client) => client !== leaving);
    await waitFor(() => staying.every((client) => received(client, payload) === 1), 'the clients that stayed');
    expect(delivery).toMatchObject({ sent: staying.length, gone: 1, failed: 0 });
    expect(received(leaving, payload)).toBe(0);
    expect(received(joined!, payload)).toBe(0);
    expect(await ids(store.shard(shard))).not.toContain(leaving.id);

    // The next event reaches the newcomer, wherever its id put it.
    const next = uniqueFrame();
    await deliverShard(job(shardOf(joined!.id), next.frame), parts(), ledger());
    await waitFor(() => received(joined!, next.payload) === 1, 'the newcomer');
    clients.splice(clients.indexOf(leaving), 1);
  });
});

describe('a broadcast through the fan-out function', () => {
  const listeners: Listener[] = [];
  const startListener = (options: Partial<ListenerOptions>) => {
    const listener = new Listener({ databaseUrl: stack.databaseUrl, managementEndpoint: stack.url, pollMs: 200, reconnectMs: 300, log, ...options }).start();
    listeners.push(listener);
    return listener;
  };
  const leading = async (listener: Listener) => {
    await waitFor(() => listener.stats().leader && listener.stats().reads > 0, 'the listener to lead');
    await listener.idle();
    await stack.lambda.settled();
  };

  beforeAll(async () => {
    await createIndexerSchema(writes.pool);
  });
  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((listener) => listener.stop()));
  });

  it(
    'gives each shard to one invocation, retries a failed one without re-sending any other, and reaches every client once',
    async () => {
      while (clients.length < 40) await connect();
      // Every shard with a connection goes to the function: none is small enough for the listener to post itself.
      const listener = startListener({ smallAudience: 0, shards: functionShards(flaky, stack.url) });
      await leading(listener);
      // Every shard that holds a record is handed out, including records an earlier test's clients left for the TTL and
      // records that reads skip (expired, awaiting a handshake): a one-record read that does not reach the shard's end.
      const occupied = (await Promise.all(shards.map(async (shard) => (!(await store.peek(shard, 1)).complete ? [shard] : [])))).flat();
      expect(occupied).toEqual(expect.arrayContaining([...new Set(clients.map((client) => shardOf(client.id)))]));
      const failing = shardOf(clients[0]!.id);
      await stack.sql('SELECT 1');
      await dynamoClient.send(new PutCommand({ TableName: config().DYNAMODB_TABLE, Item: failOnce(failing) }));
      const before = stack.lambda.stats();
      const handedBefore = listener.stats().shardsHanded;

      await writes.listToken();
      const expected = await writes.snapshot();
      await waitFor(() => clients.every((client) => received(client, expected) === 1), 'every client', slow);
      await listener.idle();
      await stack.lambda.settled();

      const after = stack.lambda.stats();
      // Every occupied shard is handed out (a poll may add a broadcast of its own), and exactly one retry is made, by the listener.
      const handed = listener.stats().shardsHanded - handedBefore;
      expect(handed).toBeGreaterThanOrEqual(occupied.length);
      expect(after.failedAttempts - before.failedAttempts).toBe(1);
      expect(after.attempts - before.attempts).toBe(handed + 1);
      for (const client of clients) expect(received(client, expected)).toBe(1);
    },
    slow,
  );

  it(
    'reaches every connected client exactly once per event while others connect and disconnect during the broadcasts',
    async () => {
      const listener = startListener({ smallAudience: 0 });
      await leading(listener);
      const abandonedBefore = stack.lambda.stats().abandoned;
      const churners: Array<{ hub: Hub; market: Client['market'] }> = [];
      let churning = true;
      const churn = (async () => {
        // At most 30 of them, so a slow machine's longer broadcasts do not grow the audience without bound.
        for (let i = 0; churning && i < 30; i++) {
          const hub = await connectHub(stack.url);
          churners.push({ hub, market: record(hub, 'marketChanged') });
          if (i % 2) await churners[i - 1]!.hub.stop();
        }
      })();
      const events = [];
      for (let i = 0; i < 6; i++) {
        await writes.listToken();
        const expected = await writes.snapshot();
        events.push(expected);
        await waitFor(() => clients.every((client) => received(client, expected) === 1), `event ${i} at every steady client`, slow);
      }
      churning = false;
      await churn;
      await listener.idle();
      await stack.lambda.settled();
      for (const expected of events) {
        for (const client of clients) expect(received(client, expected)).toBe(1);
        for (const churner of churners)
          expect(churner.market.filter((each) => JSON.stringify(each) === JSON.stringify(expected)).length).toBeLessThanOrEqual(1);
      }
      // Some of the churners were there for some events: the churn overlapped the fan-outs rather than coming after them.
      expect(churners.some((churner) => churner.market.length > 0)).toBe(true);
      expect(listener.stats().failedShards).toBe(0);
      expect(stack.lambda.stats().abandoned).toBe(abandonedBefore);
      await Promise.all(churners.map((churner) => churner.hub.stop()));
    },
    slow,
  );

  it('broadcasts the listings again when a post was left undelivered, so the client it missed ends on them too', async () => {
    while (clients.length < 2) await connect();
    const missed = clients[1]!;
    let failing = false;
    let failed = 0;
    // A post that failed in a way that may hide a delivery (a 5xx) is never tried again: only a new broadcast reaches the client.
    const proxy = await managementProxy(
      () => stack.url,
      (call) => {
        if (!failing || isHandshakeAnswer(call) || decodeURIComponent(call.path.split('/@connections/')[1] ?? '') !== missed.id) return 'forward';
        failing = false;
        failed++;
        return { status: 500, type: 'InternalServerErrorException' };
      },
    );
    try {
      const listener = startListener({ managementEndpoint: proxy.url });
      await leading(listener);
      const before = listener.stats();
      const seenBefore = new Map(clients.map((client) => [client, client.market.length]));
      failing = true;
      await writes.listToken();
      const expected = await writes.snapshot();
      await waitFor(() => received(missed, expected) > 0, 'the listings at the client whose post failed');
      await listener.idle();
      expect(failed).toBe(1);
      expect(listener.stats().undelivered - before.undelivered).toBeGreaterThan(0);
      // The same listings went again as a new version (more than once only if a repeat left a post undelivered too).
      expect(listener.stats().marketChanged - before.marketChanged).toBeGreaterThan(1);
      await waitFor(() => clients.every((client) => received(client, expected) > 0), 'the listings at every client');
      for (const client of clients) expect(versionsGrow(client.market.slice(seenBefore.get(client)))).toBe(true);
    } finally {
      proxy.close();
    }
  });

  it('posts a small audience itself, with one read per shard and no invocation', async () => {
    const listener = startListener({});
    await leading(listener);
    const attemptsBefore = stack.lambda.stats().attempts;
    await writes.listToken();
    const expected = await writes.snapshot();
    await waitFor(() => clients.every((client) => received(client, expected) === 1), 'every client');
    await listener.idle();
    expect(stack.lambda.stats().attempts).toBe(attemptsBefore);
    expect(listener.stats().shardsHanded).toBe(0);
  });

  it('sends marketChanged on its first read, so clients resync after a deploy or a failover', async () => {
    const snapshot = await writes.snapshot();
    const before = clients.map((client) => received(client, snapshot));
    const listener = startListener({});
    await leading(listener);
    await waitFor(() => clients.every((client, i) => received(client, snapshot) === before[i]! + 1), 'the resync');
  });

  it('keeps maxBlock moving forward when a listing is sold or cancelled', async () => {
    const listener = startListener({});
    await leading(listener);
    const client = clients[0]!;
    const from = client.market.length;
    await writes.listToken();
    const listed = await writes.snapshot();
    const { rows } = await writes.pool.query<{ tokenId: string }>(`SELECT max(token_id)::text AS "tokenId" FROM indexer.listings WHERE status = 'Active'`);
    await writes.sell({ tokenId: rows[0]!.tokenId, buyer: wallet(43), block: writes.nextBlock() });
    const sold = await writes.snapshot();
    await waitFor(() => received(client, sold) === 1, 'the sale’s marketChanged');
    const seen = client.market.slice(from);
    expect(seen.at(-1)).toEqual({ ...sold, ...anyVersion });
    expect(versionsGrow(seen)).toBe(true);
    expect(sold.count).toBe(listed.count - 1);
    expect(BigInt(sold.maxBlock)).toBeGreaterThan(BigInt(listed.maxBlock));
    for (let i = 1; i < seen.length; i++) expect(BigInt(seen[i]!.maxBlock)).toBeGreaterThanOrEqual(BigInt(seen[i - 1]!.maxBlock));
  });
});
