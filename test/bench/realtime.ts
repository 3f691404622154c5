import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { limits } from '@hatchery/core/limits';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { notificationChannel, readListingsSnapshot } from '@hatchery/core/realtime/changes';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { hubConnections, managementClient } from '@hatchery/core/realtime/management';
import { forEachBounded } from '@hatchery/listener/fan-out';
import { hubPath } from '@hatchery/functions/routes/realtime';
import type { BenchSection } from './context';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const wallMs = () => performance.timeOrigin + performance.now();

/**
 * The hub clients, in a process of their own (10,000 sockets on each side
 * would not fit one process's file limit, and they get the second core).
 * Plain WebSocket clients speaking the SignalR JSON protocol: handshake,
 * Subscribe, and the arrival time of each event.
 */
function clientProcess(): void {
  const { WebSocket } = require('ws') as typeof import('ws');
  const RS = '\u001e';
  const now = () => performance.timeOrigin + performance.now();
  const sockets: import('ws').WebSocket[] = [];
  const completions = new Map<string, () => void>();
  let waiting: { target: string; expected: Set<number>; times: Map<number, number>; done: () => void } | undefined;
  const send = (message: object) => process.send!(message);

  function onMessage(index: number, text: string): void {
    for (const record of text.split(RS)) {
      if (!record) continue;
      if (waiting && waiting.expected.has(index) && !waiting.times.has(index) && record.includes(`"target":"${waiting.target}"`)) {
        waiting.times.set(index, now());
        if (waiting.times.size === waiting.expected.size) waiting.done();
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
        waiting = undefined;
        send({ cmd: 'received', times: [...times.values()], missing: clients.length - times.size });
      };
      const timer = setTimeout(finish, timeoutMs);
      waiting = { target, expected: new Set(clients), times, done: finish };
      send({ cmd: 'armed' });
    } else if (command.cmd === 'close') {
      for (const socket of sockets) socket?.terminate();
      process.exit(0);
    }
  });
  send({ cmd: 'ready' });
}

interface Clients {
  request<T>(command: object | undefined, reply: string): Promise<T>;
  close(): void;
}

async function startClients(): Promise<Clients> {
  // tsx compiles with esbuild's keepNames, whose `__name` helper the function's source then calls.
  const source = `const __name = (target) => target; (${clientProcess.toString()})()`;
  const child: ChildProcess = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.once('exit', (code) => {
    if (code) throw new Error(`the hub clients' process exited with ${code}`);
  });
  const replies: Array<{ cmd: string; resolve: (message: unknown) => void }> = [];
  child.on('message', (message: { cmd: string }) => {
    const index = replies.findIndex((reply) => reply.cmd === message.cmd);
    if (index >= 0) replies.splice(index, 1)[0]!.resolve(message);
  });
  const request = <T>(command: object | undefined, reply: string) =>
    new Promise<T>((resolve) => {
      replies.push({ cmd: reply, resolve: resolve as (message: unknown) => void });
      if (command) child.send(command);
    });
  await request(undefined, 'ready');
  return { request, close: () => child.send({ cmd: 'close' }) };
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

/** The AWS SDK's own cost: the same PostToConnection calls, as the listener makes them, to a server that only answers 200. */
async function sdkAlone(count: number): Promise<number> {
  const server = createServer((request, response) => request.resume().on('end', () => response.end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const connections = hubConnections(managementClient(`http://127.0.0.1:${port}`, limits.hub.fanOutConcurrency));
  const data = new TextEncoder().encode(marketChangedMessage({ count: 0, maxBlock: '0' }));
  async function* ids() {
    yield Array.from({ length: count }, (_, i) => `Connection${String(i).padStart(5, '0')}=`);
  }
  await forEachBounded(ids(), limits.hub.fanOutConcurrency, async (id) => void (await connections.post(id, data)));
  const started = performance.now();
  await forEachBounded(ids(), limits.hub.fanOutConcurrency, async (id) => void (await connections.post(id, data)));
  const elapsed = performance.now() - started;
  server.closeAllConnections();
  server.close();
  return elapsed;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—').padStart(9);

/**
 * marketChanged fan-out to 1,000 and 10,000 connected clients (NOTIFY to the
 * last client's receipt), and forgeFulfilled latency from NOTIFY to the
 * client, through the whole local product: the in-process listener, the
 * DynamoDB connection store (dynalite), the management API over HTTP with
 * the AWS SDK, and the local WebSocket gateway.
 */
export const realtimeBench: BenchSection = async ({ stack, sql }) => {
  const url = `${stack.url.replace('http', 'ws')}${hubPath}`;
  const store = connectionStore();
  const rounds = Number(process.env.BENCH_REALTIME_ROUNDS ?? 3);
  const sizes = (process.env.BENCH_REALTIME_CLIENTS ?? '1000,10000').split(',').map(Number);

  /** Commits `work` and NOTIFY together, and answers when the COMMIT (which delivers the NOTIFY) was sent. */
  async function commitWithNotify(statement: string, values: unknown[] = []): Promise<number> {
    const client = await sql.connect();
    try {
      await client.query('BEGIN');
      await client.query(statement, values);
      await client.query('SELECT pg_notify($1, $2)', [notificationChannel, 'bench']);
      const sentAt = wallMs();
      await client.query('COMMIT');
      return sentAt;
    } finally {
      client.release();
    }
  }

  const clients = await startClients();
  try {
    console.log('\nRealtime: marketChanged fan-out (NOTIFY → every client has the event)');
    console.log(
      `${'clients'.padStart(8)} ${'connect s'.padStart(9)} ${'rounds'.padStart(6)} ${'first ms'.padStart(9)} ${'p50 ms'.padStart(9)} ${'last ms'.padStart(9)} ${'missed'.padStart(6)} | ${'SQL read'.padStart(9)} ${'Dynamo ids'.padStart(10)} ${'SDK alone'.padStart(9)} ${'ws.send'.padStart(9)} | ${'last/ws.send'.padStart(12)}`,
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
      for (let round = 0; round < rounds; round++) {
        await clients.request({ cmd: 'expect', target: 'marketChanged', clients: Array.from({ length: connected }, (_, i) => i), timeoutMs: 30_000 }, 'armed');
        const received = clients.request<{ times: number[]; missing: number }>(undefined, 'received');
        const sentAt = await commitWithNotify(
          `UPDATE indexer.listings SET updated_at_block = (SELECT max(updated_at_block) + 1 FROM indexer.listings)
           WHERE token_id = (SELECT min(token_id) FROM indexer.listings WHERE status = 'Active')`,
        );
        const { times, missing } = await received;
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
      const frame = marketChangedMessage({ count: 0, maxBlock: '0' });
      await Promise.all([...stack.hub.connections.values()].map((connection) => new Promise((resolve) => connection.socket.send(frame, resolve))));
      const t3 = performance.now();
      const sdk = await sdkAlone(connected);
      const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
      console.log(
        `${String(connected).padStart(8)} ${connectSeconds.toFixed(1).padStart(9)} ${String(rounds).padStart(6)} ${ms(median(firsts))} ${ms(median(medians))} ${ms(median(lasts))} ${String(missed).padStart(6)} | ${ms(t1 - t0)} ${ms(t2 - t1).padStart(10)} ${ms(sdk)} ${ms(t3 - t2)} | ${((median(lasts) / (t3 - t2)) || 0).toFixed(1).padStart(12)}`,
      );
      if (ids < connected) console.log(`  (DynamoDB listed ${ids} of ${connected} connections)`);
    }
    console.log(`(median of ${rounds} rounds; goal: 10,000 clients within 2000 ms. Parts measured alone: the listener's listings read, listing every`);
    console.log(' connection id from DynamoDB, the AWS SDK posting to that many connections of a server that only answers 200, and');
    console.log(' ws.send of the frame to every socket in the gateway: the floor without the management API)');
  } finally {
    clients.close();
  }
  // The disconnect storm of those clients ($disconnect handlers, DynamoDB deletes) is over before latency is measured.
  await waitUntil(async () => stack.hub.connections.size === 0 && (await countIds(store.all())) === 0, 120_000);

  const samples = Number(process.env.BENCH_REALTIME_SAMPLES ?? 200);
  const subscribers = 100;
  const forgeClients = await startClients();
  try {
    await forgeClients.request({ cmd: 'connect', url, count: subscribers, concurrency: 32 }, 'connected');
    const addresses = Array.from({ length: subscribers }, (_, i) => `0xbeef${String(i).padStart(36, '0')}`);
    await forgeClients.request({ cmd: 'subscribe', addresses }, 'subscribed');
    const { rows } = await sql.query<{ next: string }>(`SELECT (coalesce(max(request_id), 0) + 1)::text AS next FROM indexer.forge_requests`);
    let requestId = BigInt(rows[0]!.next) + 1_000_000n;
    const latencies: number[] = [];
    let missed = 0;
    for (let sample = 0; sample < samples; sample++) {
      const client = sample % subscribers;
      await forgeClients.request({ cmd: 'expect', target: 'forgeFulfilled', clients: [client], timeoutMs: 5_000 }, 'armed');
      const received = forgeClients.request<{ times: number[]; missing: number }>(undefined, 'received');
      const id = String(requestId++);
      const sentAt = await commitWithNotify(
        `INSERT INTO indexer.forge_requests (request_id, buyer, tier, status, token_id, edition_id, block_number, fulfilled_at_block)
         SELECT $1::numeric, $2::text, 1, 'Fulfilled', $1::numeric, 1, b, b FROM (SELECT coalesce(max(fulfilled_at_block), 0) + 1 AS b FROM indexer.forge_requests WHERE status = 'Fulfilled') AS next`,
        [id, addresses[client]],
      );
      const { times, missing } = await received;
      missed += missing;
      if (times[0] !== undefined) latencies.push(times[0] - sentAt);
    }
    latencies.sort((a, b) => a - b);
    console.log('\nRealtime: forgeFulfilled latency (NOTIFY → the subscribed client), one fulfilment at a time');
    console.log(`${'samples'.padStart(8)} ${'groups'.padStart(7)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)} ${'missed'.padStart(6)}`);
    console.log(`${String(latencies.length).padStart(8)} ${String(subscribers).padStart(7)} ${ms(percentile(latencies, 50))} ${ms(percentile(latencies, 99))} ${ms(latencies.at(-1) ?? NaN)} ${String(missed).padStart(6)}`);
    console.log('(goal: p99 under 100 ms)');
  } finally {
    forgeClients.close();
  }
};
