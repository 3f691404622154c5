import type { FanOutBudget } from '@hatchery/core/realtime/budget';
import { hubPath } from '@hatchery/functions/routes/realtime';
import { Listener } from '@hatchery/listener/listener';
import { loadAverage, type BenchSection } from './context';
import { startChild } from '../support/child';
import { clientProcess, indexerWrites, percentile } from './realtime';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The account's throttle, scaled down ten times from AWS's default (10,000 a second, a burst of 5,000). */
const quota = { perSecond: 1_000, burst: 500 };
/** The budget on: half of it, the default's share of the default throttle; off: no budget and no minimum interval. */
const budgets: Record<'on' | 'off', FanOutBudget> = { on: { postsPerSecond: 500, minIntervalMs: 1_000 }, off: { postsPerSecond: 0, minIntervalMs: 0 } };

/**
 * `BENCH_SECTIONS=quota`: the fan-out budget under the scaled quota, which the
 * local gateway models for HTTP, the hub and the management API. For each
 * audience and with the budget on and off, a listener of its own (the stack's
 * is stopped: run this section last) and:
 *  1. one broadcast to the quiet audience: NOTIFY to the last client;
 *  2. `BENCH_QUOTA_BUSY_MS` (20 s) of a busy market: a listing change every
 *     500 ms, 100 HTTP reads a second (their 429s), a forgeFulfilled to one
 *     subscribed client every second (NOTIFY to that client), and the
 *     management API calls a second the gateway counted.
 */
export const quotaBench: BenchSection = async ({ stack, sql }) => {
  const url = `${stack.url.replace('http', 'ws')}${hubPath}`;
  const sizes = (process.env.BENCH_QUOTA_CLIENTS ?? '1000,2500,5000').split(',').map(Number);
  const busyMs = Number(process.env.BENCH_QUOTA_BUSY_MS ?? 20_000);
  const buyer = `0xfeed${'0'.repeat(36)}`;

  const { commitWithNotify, touchListing } = indexerWrites(sql);
  const { rows } = await sql.query<{ next: string }>(`SELECT (coalesce(max(request_id), 0) + 1)::text AS next FROM indexer.forge_requests`);
  let requestId = BigInt(rows[0]!.next) + 2_000_000n;
  const fulfil = () =>
    commitWithNotify(
      `INSERT INTO indexer.forge_requests (request_id, buyer, tier, status, token_id, edition_id, block_number, fulfilled_at_block)
       SELECT $1::numeric, $2::text, 1, 'Fulfilled', $1::numeric, 1, b, b FROM (SELECT coalesce(max(fulfilled_at_block), 0) + 1 AS b FROM indexer.forge_requests WHERE status = 'Fulfilled') AS next`,
      [String(requestId++), buyer],
    );

  // The listeners below compete for the stack's lock with its own.
  await stack.listener?.stop();
  const clients = await startChild(clientProcess, 'ready');
  const subscriber = await startChild(clientProcess, 'ready');
  try {
    await subscriber.request({ cmd: 'connect', url, count: 1, concurrency: 1 }, 'connected');
    await subscriber.request({ cmd: 'subscribe', addresses: [buyer] }, 'subscribed');
    console.log(
      `\nQuota: the fan-out budget under the scaled quota (${quota.perSecond}/s, burst ${quota.burst}; budget on: ${budgets.on.postsPerSecond}/s, ${budgets.on.minIntervalMs} ms apart; ${stack.workers.size} fan-out workers; ${busyMs / 1000} s busy per row)`,
    );
    console.log(
      `${'clients'.padStart(8)} ${'budget'.padStart(6)} ${'load'.padStart(5)} | ${'broadcast s'.padStart(11)} ${'missed'.padStart(6)} | ${'HTTP'.padStart(5)} ${'429 %'.padStart(6)} | ${'forge p50 ms'.padStart(12)} ${'p99 ms'.padStart(7)} ${'lost'.padStart(4)} | ${'posts/s'.padStart(7)} ${'peak/s'.padStart(6)} ${'429s'.padStart(6)}`,
    );
    let connected = 0;
    for (const size of sizes) {
      // Connected with the quota off: connecting is not what is measured.
      stack.quota.configure({ perSecond: 0, burst: 0 });
      connected = (await clients.request<{ total: number }>({ cmd: 'connect', url, count: size - connected, concurrency: 64 }, 'connected')).total;
      for (const setting of ['on', 'off'] as const) {
        const load = loadAverage();
        stack.quota.configure({ perSecond: 0, burst: 0 });
        const listener = new Listener({
          databaseUrl: stack.databaseUrl,
          managementEndpoint: stack.url,
          shardConcurrency: stack.workers.size,
          budget: budgets[setting],
        }).start();
        try {
          // Its first read resyncs everyone: that broadcast is out before the quota goes on.
          while (!listener.stats().leader || listener.stats().marketChanged === 0) await sleep(50);
          await listener.idle();
          stack.quota.configure(quota);
          await sleep(1_000);

          await clients.request(
            { cmd: 'expect', target: 'marketChanged', clients: Array.from({ length: connected }, (_, i) => i), timeoutMs: 60_000 },
            'armed:marketChanged',
          );
          const received = clients.request<{ times: number[]; missing: number }>(undefined, 'received:marketChanged');
          const sentAt = await touchListing();
          const broadcast = await received;
          const broadcastSeconds = (Math.max(...broadcast.times) - sentAt) / 1000;
          await listener.idle();

          stack.quota.reset();
          const started = Date.now();
          const until = started + busyMs;
          const market = (async () => {
            for (let at = started; at < until; at += 500) {
              await sleep(at - Date.now());
              await touchListing();
            }
          })();
          const reads = (async () => {
            const statuses: Promise<number>[] = [];
            for (let at = started; at < until; at += 10) {
              await sleep(at - Date.now());
              statuses.push(
                fetch(`${stack.url}/marketplace/listings?pageSize=1`).then(
                  async (response) => (await response.arrayBuffer(), response.status),
                  () => 0,
                ),
              );
            }
            return Promise.all(statuses);
          })();
          const forge: number[] = [];
          let lost = 0;
          for (let at = started + 250; at < until; at += 1_000) {
            await sleep(at - Date.now());
            await subscriber.request({ cmd: 'expect', target: 'forgeFulfilled', clients: [0], timeoutMs: 5_000 }, 'armed:forgeFulfilled');
            const arrival = subscriber.request<{ times: number[]; missing: number }>(undefined, 'received:forgeFulfilled');
            const committedAt = await fulfil();
            const { times, missing } = await arrival;
            lost += missing;
            if (times[0] !== undefined) forge.push(times[0] - committedAt);
          }
          const [statuses] = await Promise.all([reads, market]);
          const seconds = [...stack.quota.perSecond('management').entries()]
            .filter(([second]) => second * 1000 >= started && second * 1000 < until)
            .map(([, count]) => count);
          const throttledPosts = stack.quota.stats().throttled.management;
          forge.sort((a, b) => a - b);
          const throttledShare = (statuses.filter((status) => status === 429).length / statuses.length) * 100;
          const mean = seconds.reduce((sum, count) => sum + count, 0) / Math.max(1, seconds.length);
          console.log(
            `${String(connected).padStart(8)} ${setting.padStart(6)} ${load.padStart(5)} | ${broadcastSeconds.toFixed(1).padStart(11)} ${String(broadcast.missing).padStart(6)} | ${String(statuses.length).padStart(5)} ${throttledShare.toFixed(1).padStart(6)} | ${percentile(forge, 50).toFixed(0).padStart(12)} ${percentile(forge, 99).toFixed(0).padStart(7)} ${String(lost).padStart(4)} | ${mean.toFixed(0).padStart(7)} ${String(Math.max(...seconds)).padStart(6)} ${String(throttledPosts).padStart(6)}`,
          );
        } finally {
          stack.quota.configure({ perSecond: 0, burst: 0 });
          await listener.stop();
          // Each row starts from fresh fan-out environments: a pacer keeps what the last row's 429s taught it.
          await stack.workers.recycle();
        }
      }
    }
    console.log('(broadcast s: one marketChanged to the quiet audience, NOTIFY to the last client, missed = clients without it after 60 s; during the busy');
    console.log(
      ' seconds: HTTP reads at 100 a second and their 429 share, forgeFulfilled to a subscribed client every second, NOTIFY to it, lost = not within 5 s;',
    );
    console.log(
      " posts/s: management API calls a second the gateway counted, mean and peak, and the 429s it answered them; load: the 1-minute load average at the row's start)",
    );
  } finally {
    clients.close();
    subscriber.close();
  }
};
