import http from 'node:http';
import net from 'node:net';
import { PgBoss } from 'pg-boss';
import { eventTypes } from '@hatchery/core/events/catalogue';
import { readEvents, type LoggedEvent } from '@hatchery/core/events/replay';
import { deadLetterQueue, deliveryLimits, deliveryQueue, jobSchema, type DeliveryJob } from '@hatchery/core/webhooks/delivery';
import type { WebhookEndpoint } from '@hatchery/core/webhooks/endpoints';
import { postWebhook } from '@hatchery/core/webhooks/post';
import { defaultRetryWindowMs, nextAttemptDelayMs } from '@hatchery/core/webhooks/retry-schedule';
import { webhookHeaders } from '@hatchery/core/webhooks/signature';
import { webhookMetrics } from '@hatchery/listener/metrics';
import { startWebhooks, type Webhooks } from '@hatchery/listener/webhooks';
import { logger } from '@hatchery/platform/telemetry/logger';
import type pg from 'pg';
import { startChild } from '../support/child';
import { loadAverage, type BenchSection } from './context';
import { postgresCpuMs } from './database-cpu';
import { appendBenchEvents, eventLogStarted, wallMs } from './events';
import { percentile } from './measure';

/** The signing secret of the bench's endpoints. */
export const benchSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/**
 * The receivers, in a process of their own: `ok` answers 204 at once and
 * records when each webhook-id first arrived (wall clock) and how many
 * requests came; `other` answers 204 at once and records nothing, another
 * endpoint's healthy receiver; `hang` reads each request and never answers, as
 * a receiver that hangs past the delivery's timeout.
 */
export function receiverProcess(): void {
  const { createServer } = require('node:http') as typeof import('node:http');
  const now = () => performance.timeOrigin + performance.now();
  let arrivals = new Map<string, number>();
  let requests = 0;
  let awaited: { count: number; done: (at: number) => void } | undefined;
  const ok = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const at = now();
      requests++;
      const id = String(request.headers['webhook-id']);
      if (!arrivals.has(id)) arrivals.set(id, at);
      response.writeHead(204).end();
      if (awaited && arrivals.size >= awaited.count) {
        awaited.done(at);
        awaited = undefined;
      }
    });
  });
  ok.keepAliveTimeout = 60_000;
  const other = createServer((request, response) => request.resume().on('end', () => response.writeHead(204).end()));
  other.keepAliveTimeout = 60_000;
  const hang = createServer((request) => request.resume());
  const listening = (server: import('node:http').Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      }),
    );
  void Promise.all([listening(ok), listening(other), listening(hang)]).then(([okPort, otherPort, hangPort]) =>
    process.send!({ cmd: 'ready', okPort, otherPort, hangPort }),
  );
  // A bench that dies leaves no receiver behind.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (command: { cmd: string; count?: number }) => {
    if (command.cmd === 'clear') {
      arrivals = new Map();
      requests = 0;
      process.send!({ cmd: 'cleared' });
    } else if (command.cmd === 'await') {
      const reply = (at: number) => process.send!({ cmd: 'reached', at });
      if (arrivals.size >= command.count!) reply(Math.max(...arrivals.values()));
      else awaited = { count: command.count!, done: reply };
    } else if (command.cmd === 'arrivals') {
      const usage = process.cpuUsage();
      process.send!({ cmd: 'arrivals', arrivals: [...arrivals], requests, cpuMs: (usage.user + usage.system) / 1000 });
    } else if (command.cmd === 'close') {
      process.exit(0);
    }
  });
}

/** The receivers' child process and what it answers. */
export async function startReceivers() {
  const child = await startChild(receiverProcess, 'ready');
  const arrivals = async () => {
    const reply = await child.request<{ arrivals: [string, number][]; requests: number; cpuMs: number }>({ cmd: 'arrivals' }, 'arrivals');
    return { arrivals: new Map(reply.arrivals), requests: reply.requests, cpuMs: reply.cpuMs };
  };
  return {
    child,
    okUrl: `http://127.0.0.1:${child.first.okPort as number}/hook`,
    otherUrl: `http://127.0.0.1:${child.first.otherPort as number}/hook`,
    hangUrl: `http://127.0.0.1:${child.first.hangPort as number}/hook`,
    clear: () => child.request({ cmd: 'clear' }, 'cleared'),
    /** Resolves with the wall-clock time the `count`th distinct webhook-id arrived, or rejects after `timeoutMs`. */
    reached: (count: number, timeoutMs: number) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the receiver did not get ${count} deliveries within ${timeoutMs} ms`)), timeoutMs);
        child.request<{ at: number }>({ cmd: 'await', count }, 'reached').then(({ at }) => {
          clearTimeout(timer);
          resolve(at);
        }, reject);
      }),
    arrivals,
  };
}

/** A loopback address nothing listens on: its connections are refused. */
async function refusingUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hook`;
}

const endpoint = (name: string, url: string): WebhookEndpoint => ({ name, url, types: [...eventTypes], finality: 'latest', secrets: [benchSecret] });

/** The listener's webhooks (packages/listener/src/webhooks.ts) for `endpoints`, in this process as the local stack runs its listener. */
function startBenchWebhooks(databaseUrl: string, endpoints: WebhookEndpoint[]): Promise<Webhooks> {
  return startWebhooks({
    databaseUrl,
    endpoints,
    deployed: false,
    retryWindowMs: defaultRetryWindowMs,
    log: logger().child({ component: 'bench-webhooks' }),
    metrics: webhookMetrics(),
  });
}

/** Places each endpoint at the log's end (its first dispatch), so it takes only what is appended after. */
async function placed(webhooks: Webhooks): Promise<void> {
  webhooks.dispatch();
  await webhooks.idle();
}

/** The events at `first`..`last` as the log answers them, the bodies a delivery sends. */
async function loggedEvents(sql: pg.Pool, first: number, last: number): Promise<LoggedEvent[]> {
  const events: LoggedEvent[] = [];
  while (first + events.length <= last) {
    const page = await readEvents(sql, { after: first - 1 + events.length, finality: 'latest', limit: 1_000 }, undefined);
    events.push(...page.items.filter((event) => event.position <= last));
  }
  return events;
}

/**
 * The same signed posts as the workers make (a body per event, signed at
 * each attempt, posted with the delivery's bounds over a keep-alive agent of
 * as many sockets), from as many loops as an endpoint has attempts in flight, with no
 * queue: what the receiver and the HTTP round trips alone allow.
 */
async function postAlone(url: string, events: LoggedEvent[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: deliveryLimits.concurrency });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: deliveryLimits.concurrency }, async () => {
      while (next < events.length) {
        const body = JSON.stringify(events[next++]!);
        const outcome = await postWebhook({
          url,
          body,
          headers: { ...webhookHeaders({ id: JSON.parse(body).id, timestamp: new Date(), body, secrets: [benchSecret] }) },
          allowPrivate: true,
          connectTimeoutMs: deliveryLimits.connectTimeoutMs,
          timeoutMs: deliveryLimits.timeoutMs,
          maxResponseBytes: deliveryLimits.maxResponseBytes,
          agent,
        });
        if (outcome.kind !== 'delivered') throw new Error(`the receiver refused a post: ${JSON.stringify(outcome)}`);
      }
    }),
  );
  const elapsed = performance.now() - started;
  agent.destroy();
  return elapsed;
}

interface Cpu {
  node: number;
  database: number | undefined;
  receiver: number;
}

/** This process's, PostgreSQL's and the receiver's CPU so far, in ms. */
async function cpuNow(receivers: Awaited<ReturnType<typeof startReceivers>>, postgresPid: number | undefined): Promise<Cpu> {
  const usage = process.cpuUsage();
  return {
    node: (usage.user + usage.system) / 1000,
    database: postgresPid === undefined ? undefined : postgresCpuMs(postgresPid),
    receiver: (await receivers.arrivals()).cpuMs,
  };
}

const perEvent = (before: Cpu, after: Cpu, events: number) => ({
  node: (after.node - before.node) / events,
  database: before.database === undefined || after.database === undefined ? undefined : (after.database - before.database) / events,
  receiver: (after.receiver - before.receiver) / events,
});

const fixed = (value: number | undefined, digits: number, width: number) => (value === undefined ? '—' : value.toFixed(digits)).padStart(width);

/**
 * A backlog of `BENCH_WEBHOOK_BACKLOG` events (10,000) drained to one healthy
 * endpoint: from the dispatch that hands them to its queue to the receiver's
 * 204 for the last one, beside the same signed posts sent with no queue.
 */
async function drain(databaseUrl: string, sql: pg.Pool, receivers: Awaited<ReturnType<typeof startReceivers>>, postgresPid: number | undefined): Promise<void> {
  const backlog = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 10_000);
  const webhooks = await startBenchWebhooks(databaseUrl, [endpoint('bench-drain', receivers.okUrl)]);
  try {
    await placed(webhooks);
    // A warm-up through the same path: the workers' connections, the agent's sockets, pg-boss's first transaction.
    await receivers.clear();
    await appendBenchEvents(sql, 200);
    webhooks.dispatch();
    await receivers.reached(200, 60_000);

    const { first, last } = await appendBenchEvents(sql, backlog);
    const events = await loggedEvents(sql, first, last);
    await receivers.clear();
    const baselineLoad = loadAverage();
    const baselineCpu = await cpuNow(receivers, postgresPid);
    const baselineMs = await postAlone(receivers.okUrl, events);
    const baselineUse = perEvent(baselineCpu, await cpuNow(receivers, postgresPid), backlog);

    await receivers.clear();
    const load = loadAverage();
    const before = await cpuNow(receivers, postgresPid);
    const started = wallMs();
    webhooks.dispatch();
    const reached = receivers.reached(backlog, 600_000);
    await webhooks.idle();
    const dispatchedMs = wallMs() - started;
    const drainedMs = (await reached) - started;
    const use = perEvent(before, await cpuNow(receivers, postgresPid), backlog);
    const { requests } = await receivers.arrivals();

    const rate = (backlog / drainedMs) * 1000;
    const baselineRate = (backlog / baselineMs) * 1000;
    console.log(
      `\nWebhooks: a backlog of ${backlog.toLocaleString('en')} events to one healthy endpoint (${deliveryLimits.concurrency} attempts in flight, ${deliveryLimits.batch} a batch; a receiver in a process of its own answering 204 at once)`,
    );
    console.log(
      `${'case'.padEnd(34)} ${'load'.padStart(5)} ${'events/s'.padStart(9)} ${'total ms'.padStart(9)} ${'dispatch ms'.padStart(11)} | ${'node ms/ev'.padStart(10)} ${'db ms/ev'.padStart(9)} ${'recv ms/ev'.padStart(10)}`,
    );
    console.log(
      `${'queue: dispatch → last 204'.padEnd(34)} ${load.padStart(5)} ${rate.toFixed(0).padStart(9)} ${drainedMs.toFixed(0).padStart(9)} ${dispatchedMs.toFixed(0).padStart(11)} | ${fixed(use.node, 3, 10)} ${fixed(use.database, 3, 9)} ${fixed(use.receiver, 3, 10)}`,
    );
    console.log(
      `${'the same posts, no queue'.padEnd(34)} ${baselineLoad.padStart(5)} ${baselineRate.toFixed(0).padStart(9)} ${baselineMs.toFixed(0).padStart(9)} ${'—'.padStart(11)} | ${fixed(baselineUse.node, 3, 10)} ${fixed(baselineUse.database, 3, 9)} ${fixed(baselineUse.receiver, 3, 10)}`,
    );
    console.log(
      `(rate ratio queue / no queue ${(rate / baselineRate).toFixed(2)}; goal: the queue drains ${(500).toLocaleString('en')} events/s or more; ${requests - backlog} posts beyond one per event;`,
    );
    console.log(' node ms/ev = this process’s CPU per event (the workers, the stack’s idle handlers and listener), db = PostgreSQL’s, recv = the receiver’s)');
  } finally {
    await webhooks.stop();
    await dropEndpoint(databaseUrl, sql, 'bench-drain');
  }
}

/** The endpoint beside the healthy one: none, another healthy one, or one that is down. */
type Other = 'none' | 'healthy' | 'refusing' | 'hanging';

interface Stream {
  /** Events a second (BENCH_WEBHOOK_STREAM_RATE, 20). */
  rate: number;
  /** How long a run streams (BENCH_WEBHOOK_STREAM_MS, 30 s). */
  durationMs: number;
}

/**
 * One run of the isolation: the stream's events, each appended and
 * dispatched as the listener does, to the healthy endpoint and, unless `other`
 * is `none`, to another endpoint listed before it; one that is down holds in
 * its queue what an hour down leaves. Resolves with each event's delivery
 * latency at the healthy endpoint (its commit to the receiver's arrival), and
 * how many attempts a second the other endpoint made meanwhile.
 */
async function streamRun(
  databaseUrl: string,
  sql: pg.Pool,
  receivers: Awaited<ReturnType<typeof startReceivers>>,
  { rate, durationMs }: Stream,
  other: Other,
  run: number,
): Promise<{ latencies: number[]; load: string; otherAttemptsPerSecond: number }> {
  const healthy = endpoint('bench-healthy', receivers.okUrl);
  const otherName = `bench-${other}-${run}`;
  const otherUrl = { none: '', healthy: receivers.otherUrl, refusing: await refusingUrl(), hanging: receivers.hangUrl }[other];
  const endpoints = other === 'none' ? [healthy] : [endpoint(otherName, otherUrl), healthy];
  const webhooks = await startBenchWebhooks(databaseUrl, endpoints);
  try {
    await placed(webhooks);
    if (other === 'refusing' || other === 'hanging') await fillHourDown(databaseUrl, otherName, rate);
    await receivers.clear();
    await appendBenchEvents(sql, 20);
    webhooks.dispatch();
    await receivers.reached(20, 60_000);
    await receivers.clear();

    const count = Math.round((rate * durationMs) / 1000);
    const committed = new Map<string, number>();
    const load = loadAverage();
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / rate;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      const { first, committedAt } = await appendBenchEvents(sql, 1);
      committed.set(`evt_${first}`, committedAt);
      webhooks.dispatch();
    }
    await receivers.reached(count, 120_000);
    const seconds = (performance.now() - started) / 1000;
    const { arrivals } = await receivers.arrivals();
    const latencies = [...committed].map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
    const { rows } = await sql.query<{ attempts: number }>(
      `SELECT count(*)::int AS attempts FROM ${jobSchema}.job WHERE name = $1 AND started_on >= now() - make_interval(secs => $2)`,
      [deliveryQueue(otherName), seconds],
    );
    return { latencies, load, otherAttemptsPerSecond: (rows[0]?.attempts ?? 0) / seconds };
  } finally {
    await webhooks.stop();
    if (other !== 'none') await dropEndpoint(databaseUrl, sql, otherName);
  }
}

/** A pg-boss of the bench's own, for the down endpoint's queue: the jobs an hour down leaves, and dropping the queue after. */
async function withBoss<T>(databaseUrl: string, work: (boss: PgBoss) => Promise<T>): Promise<T> {
  const boss = new PgBoss({ connectionString: databaseUrl, schema: jobSchema, max: 2, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    return await work(boss);
  } finally {
    await boss.stop({ graceful: false });
  }
}

/**
 * What an hour down leaves in an endpoint's queue at the stream's rate: one delivery for each event of the past hour,
 * retried on the delivery's schedule (nextAttemptDelayMs) since its first attempt, due at its next attempt. The
 * youngest are retried every few seconds, so the endpoint is tried about as often as it would be after an hour down.
 */
function fillHourDown(databaseUrl: string, name: string, rate: number): Promise<number> {
  const hour = rate * 3_600;
  const now = Date.now();
  const job = (n: number) => {
    const firstAttemptAt = now - (n / rate) * 1_000;
    let failures = 1;
    let due = firstAttemptAt + nextAttemptDelayMs({ attempt: failures });
    while (due <= now) due += nextAttemptDelayMs({ attempt: ++failures });
    const data: DeliveryJob = {
      event: {
        id: `evt_hour${n}`,
        position: -n,
        type: 'forge.fulfilled',
        chainId: 31337,
        blockNumber: '1',
        entity: String(n),
        wallets: [],
        createdAt: new Date(firstAttemptAt).toISOString(),
        payload: { requestId: String(n), buyer: '0x0000000000000000000000000000000000000001', tier: 1 },
      },
      firstAttemptAt: new Date(firstAttemptAt).toISOString(),
      failures,
      lastFailure: 'connect ECONNREFUSED',
    };
    return { data, startAfter: new Date(due) };
  };
  return withBoss(databaseUrl, async (boss) => {
    for (let done = 0; done < hour; done += 5_000)
      await boss.insert(
        deliveryQueue(name),
        Array.from({ length: Math.min(5_000, hour - done) }, (_, i) => job(done + i + 1)),
      );
    return hour;
  });
}

/** An endpoint of the bench's gone from the queue and the dispatch, as if never declared. */
async function dropEndpoint(databaseUrl: string, sql: pg.Pool, name: string): Promise<void> {
  await withBoss(databaseUrl, async (boss) => {
    await boss.deleteQueue(deliveryQueue(name));
    await boss.deleteQueue(deadLetterQueue(name));
  });
  await sql.query('DELETE FROM hatchery.webhook_dispatch WHERE endpoint = $1', [name]);
}

/**
 * The healthy endpoint's delivery latency with no other endpoint, beside
 * another healthy one, and beside one that is down (refusing connections, or
 * hanging past the delivery's timeout). Each case runs `BENCH_WEBHOOK_ROUNDS`
 * times (3), the cases in turn, so a drift of the machine falls on all of
 * them; each case's latencies are pooled over its rounds, and the spread of its
 * rounds' p99s shows the noise.
 */
async function isolation(databaseUrl: string, sql: pg.Pool, receivers: Awaited<ReturnType<typeof startReceivers>>): Promise<void> {
  const stream: Stream = {
    rate: Number(process.env.BENCH_WEBHOOK_STREAM_RATE ?? 20),
    durationMs: Number(process.env.BENCH_WEBHOOK_STREAM_MS ?? 30_000),
  };
  const rounds = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3);
  const cases: Array<{ other: Other; name: string }> = [
    { other: 'none', name: 'no other endpoint' },
    { other: 'healthy', name: 'another healthy endpoint' },
    { other: 'refusing', name: 'an endpoint refusing connections' },
    { other: 'hanging', name: 'an endpoint hanging past 10 s' },
  ];
  const results = new Map(
    cases.map((each) => [each.other, { ...each, latencies: [] as number[], p99s: [] as number[], loads: [] as string[], tries: [] as number[] }]),
  );
  let run = 0;
  try {
    for (let round = 0; round < rounds; round++)
      for (const each of cases) {
        const result = await streamRun(databaseUrl, sql, receivers, stream, each.other, run++);
        const into = results.get(each.other)!;
        into.latencies.push(...result.latencies);
        into.p99s.push(percentile(result.latencies, 99));
        into.loads.push(result.load);
        into.tries.push(result.otherAttemptsPerSecond);
      }
  } finally {
    await dropEndpoint(databaseUrl, sql, 'bench-healthy');
  }
  for (const result of results.values()) result.latencies.sort((a, b) => a - b);
  const p99Of = (other: Other) => percentile(results.get(other)!.latencies, 99);
  console.log(
    `\nWebhooks: a healthy endpoint's delivery latency (commit → its receiver's arrival) at ${stream.rate} events/s, ${rounds} rounds of ${stream.durationMs / 1000} s per case, beside another endpoint, up or down`,
  );
  console.log(
    ` (the other endpoint takes the same events and is listed first; a down one's queue holds what an hour down leaves: ${(stream.rate * 3_600).toLocaleString('en')} deliveries on their retry schedule)`,
  );
  console.log(
    `${'beside the healthy endpoint'.padEnd(34)} ${'loads'.padStart(11)} ${'events'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${"rounds' p99".padStart(13)} ${'max ms'.padStart(7)} | ${'÷ none'.padStart(6)} ${'÷ up'.padStart(6)} ${'other tries/s'.padStart(13)}`,
  );
  for (const result of results.values()) {
    const p99 = p99Of(result.other);
    const down = result.other === 'refusing' || result.other === 'hanging';
    console.log(
      `${result.name.padEnd(34)} ${result.loads.join(' ').padStart(11)} ${String(result.latencies.length).padStart(7)} ${percentile(result.latencies, 50).toFixed(1).padStart(7)} ${p99.toFixed(1).padStart(7)} ${result.p99s
        .map((value) => value.toFixed(0))
        .join('–')
        .padStart(
          13,
        )} ${result.latencies.at(-1)!.toFixed(1).padStart(7)} | ${(p99 / p99Of('none')).toFixed(2).padStart(6)} ${(down ? (p99 / p99Of('healthy')).toFixed(2) : '—').padStart(6)} ${(result.other === 'none' ? '—' : (result.tries.reduce((a, b) => a + b, 0) / result.tries.length).toFixed(0)).padStart(13)}`,
    );
  }
  console.log(
    "(÷ none = the case's pooled p99 / that with no other endpoint; ÷ up = a down endpoint's case / the same endpoint up; goal: an endpoint down changes the other's p99 by under 10 %, ÷ up under 1.10; the rounds' p99s show the noise)",
  );
}

/**
 * BENCH_WEBHOOKS=1: an endpoint for the stack's own listener, set in its configuration before the stack starts, taking
 * every event at `latest` to a receiver answering 204.
 */
export async function stackEndpoint() {
  const receivers = await startReceivers();
  process.env.WEBHOOK_ENDPOINTS = JSON.stringify([endpoint('bench-stack', receivers.okUrl)]);
  return receivers;
}

/** `BENCH_SECTIONS=webhooks`: the backlog's drain, and a healthy endpoint's latency beside one that is down. */
export const webhooksBench: BenchSection = async ({ stack, sql }) => {
  await eventLogStarted(sql);
  const receivers = await startReceivers();
  try {
    await drain(stack.databaseUrl, sql, receivers, stack.postgres?.pid);
    await isolation(stack.databaseUrl, sql, receivers);
  } finally {
    receivers.child.close();
  }
};
