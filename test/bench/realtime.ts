import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '@hatchery/platform/config';
import { dynamoClient as serviceDynamoClient } from '@hatchery/platform/aws/dynamo';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import { ensureTable } from '@hatchery/platform/aws/table';
import { notificationChannel } from '@hatchery/core/indexer/names';
import { readListingsSnapshot } from '@hatchery/core/realtime/changes';
import { connectionShards, connectionItem, connectionStore, shards } from '@hatchery/core/realtime/connections';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { fanOutLimits, forEachBounded } from '@hatchery/core/realtime/fan-out';
import { hubConnections, managementClient } from '@hatchery/platform/aws/management';
import { fanOutHandler, hubPath } from '@hatchery/functions/routes/realtime';
import { workerPool, type WorkerPool } from '@hatchery/local/gateway/workers';
import type pg from 'pg';
import { startChild, type Child } from '../support/child';
import type { BenchSection } from './context';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const wallMs = () => performance.timeOrigin + performance.now();

/**
 * The hub clients, in a process of their own (10,000 sockets on each side
 * would not fit one process's file limit, and they get the second core).
 * Plain WebSocket clients speaking the SignalR JSON protocol: handshake,
 * Subscribe, and the arrival time of each event, one expectation per target
 * at a time so a forgeFulfilled can be timed while a marketChanged arrives.
 */
export function clientProcess(): void {
  const { WebSocket } = require('ws') as typeof import('ws');
  const RS = '\u001e';
  const now = () => performance.timeOrigin + performance.now();
  const sockets: import('ws').WebSocket[] = [];
  const completions = new Map<string, () => void>();
  const waiting = new Map<string, { expected: Set<number>; times: Map<number, number>; done: () => void }>();
  const send = (message: object) => process.send!(message);

  function onMessage(index: number, text: string): void {
    for (const record of text.split(RS)) {
      if (!record) continue;
      const target = /"target":"([^"]+)"/.exec(record)?.[1];
      const wait = target === undefined ? undefined : waiting.get(target);
      if (wait?.expected.has(index) && !wait.times.has(index)) {
        wait.times.set(index, now());
        if (wait.times.size === wait.expected.size) wait.done();
      }
      const completion = /^\{"type":3,"invocationId":"([^"]+)"/.exec(record);
      if (completion) completions.get(completion[1]!)?.();
    }
  }

  function open(url: string, index: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { perMessageDeflate: false });
      socket.once('error', reject);
      socket.once('open', () => socket.send(`{"protocol":"json","version":1}${RS}`));
      socket.once('message', (data) => {
        if (data.toString() !== `{}${RS}`) return reject(new Error(`handshake answered ${data.toString()}`));
        socket.on('message', (more) => onMessage(index, more.toString()));
        sockets[index] = socket;
        resolve();
      });
    });
  }

  process.on('message', async (command: { cmd: string; [key: string]: unknown }) => {
    if (command.cmd === 'connect') {
      const { url, count, concurrency } = command as unknown as { url: string; count: number; concurrency: number };
      let next = sockets.length;
      const end = sockets.length + count;
      let failed = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < end) await open(url, next++).catch(() => failed++);
        }),
      );
      send({ cmd: 'connected', total: sockets.filter(Boolean).length, failed });
    } else if (command.cmd === 'subscribe') {
      const { addresses } = command as unknown as { addresses: string[] };
      await Promise.all(
        addresses.map(
          (address, index) =>
            new Promise<void>((resolve) => {
              completions.set(`s${index}`, resolve);
              sockets[index]!.send(`${JSON.stringify({ type: 1, invocationId: `s${index}`, target: 'Subscribe', arguments: [address] })}${RS}`);
            }),
        ),
      );
      send({ cmd: 'subscribed' });
    } else if (command.cmd === 'expect') {
      const { target, clients, timeoutMs } = command as unknown as { target: string; clients: number[]; timeoutMs: number };
      const times = new Map<number, number>();
      const finish = () => {
        clearTimeout(timer);
        waiting.delete(target);
        send({ cmd: `received:${target}`, times: [...times.values()], missing: clients.length - times.size });
      };
      const timer = setTimeout(finish, timeoutMs);
      waiting.set(target, { expected: new Set(clients), times, done: finish });
      send({ cmd: `armed:${target}` });
    } else if (command.cmd === 'close') {
      for (const socket of sockets) socket?.terminate();
      process.exit(0);
    }
  });
  send({ cmd: 'ready' });
}

/** A stand-in for the management API that only counts the posts it answers (200), so the fan-out's own cost is what is measured. */
function countingEndpointProcess(): void {
  const { createServer: create } = require('node:http') as typeof import('node:http');
  let posts = 0;
  const server = create((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'POST') posts++;
      response.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send!({ cmd: 'ready', port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.on('message', (command: { cmd: string }) => {
    if (command.cmd === 'count') process.send!({ cmd: 'count', posts });
    else if (command.cmd === 'close') process.exit(0);
  });
}

async function countIds(pages: AsyncIterable<string[]>): Promise<number> {
  let count = 0;
  for await (const page of pages) count += page.length;
  return count;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
}

/** The management client's own cost: the same PostToConnection calls, as a shard makes them, from this thread to a server that only answers 200 (in this process, or `endpoint`). */
async function postsAlone(count: number, endpoint?: string): Promise<number> {
  const server = createServer((request, response) => request.resume().on('end', () => response.end()));
  if (!endpoint) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const connections = hubConnections(managementClient(endpoint ?? `http://127.0.0.1:${port}`, fanOutLimits.concurrency));
  const data = new TextEncoder().encode(marketChangedMessage({ count: 0, maxBlock: '0', version: 1 }));
  async function* ids() {
    yield Array.from({ length: count }, (_, i) => `Connection${String(i).padStart(5, '0')}=`);
  }
  await forEachBounded(ids(), fanOutLimits.concurrency, async (id) => void (await connections.post(id, data)));
  const started = performance.now();
  await forEachBounded(ids(), fanOutLimits.concurrency, async (id) => void (await connections.post(id, data)));
  const elapsed = performance.now() - started;
  if (!endpoint) {
    server.closeAllConnections();
    server.close();
  }
  return elapsed;
}

/**
 * Loads the fan-out function into a worker, as a warm Lambda instance has it,
 * with an event it refuses before reading or posting anything (a shard that
 * does not exist), so no work of the warm-up outlives it into a measurement.
 */
const warmUp = (workers: WorkerPool, frame: string) =>
  workers.invoke({ handler: fanOutHandler, functionName: 'warm-up', event: { event: 'warm-up', shard: connectionShards, frame } }).then(
    () => Promise.reject(new Error('the fan-out function took a shard that does not exist')),
    () => undefined,
  );

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—').padStart(9);

/** Records for `count` connections that exist only in the store (the 100,000-connection fan-out), as $connect writes them, 25 to a request. */
async function seedConnections(client: DynamoDBDocumentClient, table: string, count: number): Promise<void> {
  const now = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        const ids = Array.from({ length: Math.min(25, count - next) }, () => `Sim${String(next++).padStart(12, '0')}=`);
        let requests = ids.map((id) => ({ PutRequest: { Item: connectionItem(id, now, { awaitingHandshake: false }) } }));
        while (requests.length) {
          const result = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
          requests = (result.UnprocessedItems?.[table] ?? []) as typeof requests;
        }
      }
    }),
  );
}

/**
 * Writes to the indexer's tables as Ponder does, each with a NOTIFY in its transaction: `commitWithNotify`
 * answers when the COMMIT (which delivers the NOTIFY) was sent; `touchListing` moves one active listing to a new block.
 */
export function indexerWrites(sql: pg.Pool) {
  async function commitWithNotify(statement: string, values: unknown[] = []): Promise<number> {
    const client = await sql.connect();
    try {
      await client.query('BEGIN');
      await client.query(statement, values);
      await client.query('SELECT pg_notify($1, $2)', [notificationChannel(), 'bench']);
      const sentAt = wallMs();
      await client.query('COMMIT');
      return sentAt;
    } finally {
      client.release();
    }
  }
  const touchListing = () =>
    commitWithNotify(
      `UPDATE indexer.listings SET updated_at_block = (SELECT max(updated_at_block) + 1 FROM indexer.listings)
       WHERE token_id = (SELECT min(token_id) FROM indexer.listings WHERE status = 'Active')`,
    );
  return { commitWithNotify, touchListing };
}

/**
 * The realtime figures, through the whole local product: the stack's
 * listener, the sharded connection store (dynalite), the fan-out function in
 * the local Lambda service's worker threads, the management API over HTTP
 * with the service's management client (the AWS SDK's), and the local WebSocket gateway; the clients, and the
 * count-only management endpoint, each in a process of their own.
 *  1. marketChanged to 1,000 and 10,000 clients, NOTIFY to the last client;
 *  2. forgeFulfilled, NOTIFY to the subscribed client, while such a broadcast is in flight;
 *  3. 100,000 connections in the store posted to the count-only endpoint with 1, 2 and N workers.
 */
export const realtimeBench: BenchSection = async ({ stack, sql }) => {
  const url = `${stack.url.replace('http', 'ws')}${hubPath}`;
  const store = connectionStore();
  const rounds = Number(process.env.BENCH_REALTIME_ROUNDS ?? 3);
  const sizes = (process.env.BENCH_REALTIME_CLIENTS ?? '1000,10000').split(',').map(Number);
  const forgeBroadcasts = Number(process.env.BENCH_REALTIME_SAMPLES ?? 200) / 20;
  const simulated = Number(process.env.BENCH_REALTIME_SIMULATED ?? 100_000);

  const { commitWithNotify, touchListing } = indexerWrites(sql);

  const clients = await startChild(clientProcess, 'ready');
  let timed: Child | undefined;
  try {
    console.log(`\nRealtime: marketChanged fan-out (NOTIFY → every client has the event; ${connectionShards} shards, ${stack.workers.size} fan-out workers)`);
    console.log(
      `${'clients'.padStart(8)} ${'connect s'.padStart(9)} ${'rounds'.padStart(6)} ${'first ms'.padStart(9)} ${'p50 ms'.padStart(9)} ${'last ms'.padStart(9)} ${'missed'.padStart(6)} | ${'SQL read'.padStart(9)} ${'Dynamo ids'.padStart(10)} ${'posts alone'.padStart(11)} ${'ws.send'.padStart(9)} | ${'last/ws.send'.padStart(12)} ${'last/posts'.padStart(10)}`,
    );
    let connected = 0;
    for (const size of sizes) {
      const started = wallMs();
      const result = await clients.request<{ total: number; failed: number }>({ cmd: 'connect', url, count: size - connected, concurrency: 64 }, 'connected');
      const connectSeconds = (wallMs() - started) / 1000;
      connected = result.total;
      if (result.failed) console.log(`  (${result.failed} connections failed)`);
      const firsts: number[] = [];
      const medians: number[] = [];
      const lasts: number[] = [];
      let missed = 0;
      // One unmeasured round first: it starts the fan-out function's workers' AWS clients, as a warm Lambda instance has them.
      for (let round = -1; round < rounds; round++) {
        await clients.request(
          { cmd: 'expect', target: 'marketChanged', clients: Array.from({ length: connected }, (_, i) => i), timeoutMs: 30_000 },
          'armed:marketChanged',
        );
        const received = clients.request<{ times: number[]; missing: number }>(undefined, 'received:marketChanged');
        const sentAt = await touchListing();
        const { times, missing } = await received;
        await stack.listener?.idle();
        await stack.lambda.settled();
        if (round < 0) continue;
        const delays = times.map((time) => time - sentAt).sort((a, b) => a - b);
        firsts.push(delays[0] ?? NaN);
        medians.push(percentile(delays, 50));
        lasts.push(delays.at(-1) ?? NaN);
        missed += missing;
      }
      // What the parts cost on their own: the listener's SQL, listing the connections, and handing the frames to the sockets directly.
      const t0 = performance.now();
      const dbClient = await sql.connect();
      await readListingsSnapshot(dbClient);
      dbClient.release();
      const t1 = performance.now();
      const ids = await countIds(store.all());
      const t2 = performance.now();
      const frame = marketChangedMessage({ count: 0, maxBlock: '0', version: 1 });
      await Promise.all([...stack.hub.connections.values()].map((connection) => new Promise((resolve) => connection.socket.send(frame, resolve))));
      const t3 = performance.now();
      const clientMs = await postsAlone(connected);
      console.log(
        `${String(connected).padStart(8)} ${connectSeconds.toFixed(1).padStart(9)} ${String(rounds).padStart(6)} ${ms(median(firsts))} ${ms(median(medians))} ${ms(median(lasts))} ${String(missed).padStart(6)} | ${ms(t1 - t0)} ${ms(t2 - t1).padStart(10)} ${ms(clientMs).padStart(11)} ${ms(t3 - t2)} | ${(median(lasts) / (t3 - t2) || 0).toFixed(1).padStart(12)} ${(median(lasts) / clientMs || 0).toFixed(2).padStart(10)}`,
      );
      if (ids < connected) console.log(`  (DynamoDB listed ${ids} of ${connected} connections)`);
    }
    console.log(`(median of ${rounds} rounds after one warm-up; goal: 10,000 clients within 1500 ms. Parts measured alone: the listener's listings read,`);
    console.log(' listing every connection id from DynamoDB, the management client posting to that many connections from one thread to a server that only');
    console.log(' answers 200, and ws.send of the frame to every socket in the gateway: the floor without the management API)');

    // forgeFulfilled while a broadcast to all of them is in flight. The timed subscribers, each standing for a browser of
    // its own, are in a process apart: their arrival times must not wait for the other clients' messages in one event loop.
    const subscribers = 100;
    const addresses = Array.from({ length: subscribers }, (_, i) => `0xbeef${String(i).padStart(36, '0')}`);
    const subscribed = await startChild(clientProcess, 'ready');
    timed = subscribed;
    await subscribed.request({ cmd: 'connect', url, count: subscribers, concurrency: 16 }, 'connected');
    await subscribed.request({ cmd: 'subscribe', addresses }, 'subscribed');
    const { rows } = await sql.query<{ next: string }>(`SELECT (coalesce(max(request_id), 0) + 1)::text AS next FROM indexer.forge_requests`);
    let requestId = BigInt(rows[0]!.next) + 1_000_000n;
    let missed = 0;
    /** One fulfilment for `client`'s address, committed with its NOTIFY, and when that client had it. */
    async function fulfil(client: number): Promise<{ sentAt: number; at?: number }> {
      await subscribed.request({ cmd: 'expect', target: 'forgeFulfilled', clients: [client], timeoutMs: 5_000 }, 'armed:forgeFulfilled');
      const received = subscribed.request<{ times: number[]; missing: number }>(undefined, 'received:forgeFulfilled');
      const id = String(requestId++);
      const sentAt = await commitWithNotify(
        `INSERT INTO indexer.forge_requests (request_id, buyer, tier, status, token_id, edition_id, block_number, fulfilled_at_block)
         SELECT $1::numeric, $2::text, 1, 'Fulfilled', $1::numeric, 1, b, b FROM (SELECT coalesce(max(fulfilled_at_block), 0) + 1 AS b FROM indexer.forge_requests WHERE status = 'Fulfilled') AS next`,
        [id, addresses[client]],
      );
      const { times, missing: lost } = await received;
      missed += lost;
      return { sentAt, at: times[0] };
    }
    const during: number[] = [];
    const after: number[] = [];
    for (let broadcast = 0; broadcast < forgeBroadcasts; broadcast++) {
      await clients.request(
        { cmd: 'expect', target: 'marketChanged', clients: Array.from({ length: connected }, (_, i) => i), timeoutMs: 30_000 },
        'armed:marketChanged',
      );
      const market = clients.request<{ times: number[] }>(undefined, 'received:marketChanged');
      await touchListing();
      const samples: Array<{ sentAt: number; at?: number }> = [];
      for (let sample = 0; sample < 20; sample++) samples.push(await fulfil((broadcast * 20 + sample) % subscribers));
      const lastMarket = Math.max(...(await market).times);
      await stack.listener?.idle();
      await stack.lambda.settled();
      // The baseline, in the same run: a few more with nothing being broadcast.
      for (let sample = 0; sample < 5; sample++) samples.push(await fulfil((broadcast * 5 + sample) % subscribers));
      for (const { sentAt, at } of samples) if (at !== undefined) (sentAt < lastMarket ? during : after).push(at - sentAt);
    }
    during.sort((a, b) => a - b);
    after.sort((a, b) => a - b);
    console.log(
      `\nRealtime: forgeFulfilled (NOTIFY → the subscribed client) with ${connected + subscribers} clients connected (the ${subscribers} subscribed ones in a process of their own) and marketChanged broadcasts to all of them`,
    );
    console.log(`${'when'.padEnd(28)} ${'samples'.padStart(8)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)}`);
    for (const [when, values] of [
      ['broadcast in flight', during],
      ['no broadcast in flight', after],
    ] as const) {
      console.log(
        `${when.padEnd(28)} ${String(values.length).padStart(8)} ${ms(percentile(values, 50))} ${ms(percentile(values, 99))} ${ms(values.at(-1) ?? NaN)}`,
      );
    }
    console.log(`(goal: p99 under 100 ms with a broadcast in flight; ${missed} missed; "in flight" = committed before the broadcast's last client had it)`);
  } finally {
    clients.close();
    timed?.close();
  }
  // The disconnect storm of those clients ($disconnect handlers, DynamoDB deletes) is over before the next part.
  await waitUntil(async () => stack.hub.connections.size === 0 && (await countIds(store.all())) === 0, 180_000);

  // 100,000 connections that exist only in a table of their own, posted to an endpoint that only counts.
  if (!simulated) return;
  const endpoint = await startChild(countingEndpointProcess, 'ready');
  try {
    const table = 'hatchery-bench-fanout';
    const dynamoClient = new DynamoDBClient({ endpoint: stack.dynamoEndpoint, region: config().AWS_REGION });
    await ensureTable(dynamoClient, table);
    const documents = DynamoDBDocumentClient.from(dynamoClient);
    const simulatedStore = connectionStore({ client: serviceDynamoClient({ endpoint: stack.dynamoEndpoint }), table });
    const seeded = performance.now();
    await seedConnections(documents, table, simulated);
    const seedSeconds = (performance.now() - seeded) / 1000;
    const standIn = `http://127.0.0.1:${endpoint.first.port as number}`;
    const frame = marketChangedMessage({ count: 1, maxBlock: '1', version: 1 });
    const readStarted = performance.now();
    const perShardIds = await countIds(simulatedStore.shard(0));
    const readMs = performance.now() - readStarted;

    console.log(`\nRealtime: ${simulated} connections (seeded in ${seedSeconds.toFixed(0)} s) fanned out to a management endpoint that only counts posts`);
    console.log(
      `${'workers'.padStart(8)} ${'fan-out ms'.padStart(11)} ${'posts/s'.padStart(9)} ${'shard p50 ms'.padStart(13)} ${'shard max ms'.padStart(13)} ${'posts'.padStart(8)} | ${'vs 1 worker'.padStart(11)}`,
    );
    let single = NaN;
    for (const size of [...new Set([1, 2, connectionShards])]) {
      const workers = workerPool(size, { ...process.env, DYNAMODB_TABLE: table, WEBSOCKET_MANAGEMENT_ENDPOINT: standIn, LOG_LEVEL: 'warn' });
      try {
        await Promise.all(Array.from({ length: size }, () => warmUp(workers, frame)));
        const before = (await endpoint.request<{ posts: number }>({ cmd: 'count' }, 'count')).posts;
        const started = performance.now();
        const shardMs = await Promise.all(
          shards.map(async (shard) => {
            const t = performance.now();
            await workers.invoke({
              handler: fanOutHandler,
              functionName: 'fan-out',
              event: { event: `bench#${randomUUID()}`, shard, frame },
              timeoutMs: deliveryDeadlines.shardTimeoutMs * 10,
            });
            return performance.now() - t;
          }),
        );
        const elapsed = performance.now() - started;
        const posts = (await endpoint.request<{ posts: number }>({ cmd: 'count' }, 'count')).posts - before;
        if (size === 1) single = elapsed;
        shardMs.sort((a, b) => a - b);
        console.log(
          `${String(size).padStart(8)} ${elapsed.toFixed(0).padStart(11)} ${((posts / elapsed) * 1000).toFixed(0).padStart(9)} ${percentile(shardMs, 50).toFixed(0).padStart(13)} ${shardMs.at(-1)!.toFixed(0).padStart(13)} ${String(posts).padStart(8)} | ${(single / elapsed).toFixed(2).padStart(11)}`,
        );
      } finally {
        await workers.close();
      }
    }
    // One shard alone on one warm worker: what one fan-out function invocation does in AWS.
    const alone = workerPool(1, { ...process.env, DYNAMODB_TABLE: table, WEBSOCKET_MANAGEMENT_ENDPOINT: standIn, LOG_LEVEL: 'warn' });
    try {
      await warmUp(alone, frame);
      const times: number[] = [];
      for (let run = 0; run < 3; run++) {
        const t = performance.now();
        await alone.invoke({
          handler: fanOutHandler,
          functionName: 'fan-out',
          event: { event: `bench#${randomUUID()}`, shard: run, frame },
          timeoutMs: deliveryDeadlines.shardTimeoutMs * 10,
        });
        times.push(performance.now() - t);
      }
      const clientMs = await postsAlone(perShardIds, standIn);
      console.log(
        `one shard alone (${perShardIds} connections) on one warm worker: ${median(times).toFixed(0)} ms (median of 3); reading its ids from dynalite alone ${readMs.toFixed(0)} ms;`,
      );
      console.log(
        `the management client alone posting as many from this thread to the same endpoint: ${clientMs.toFixed(0)} ms (ratio ${(median(times) / clientMs).toFixed(2)})`,
      );
    } finally {
      await alone.close();
    }
    console.log("(the real fan-out function and its AWS clients in worker threads; dynalite and the counting endpoint share this machine's 2 cores)");
  } finally {
    endpoint.close();
  }
};
