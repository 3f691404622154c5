import * as z from '@hatchery/platform/schema';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import { connectionShards, type ConnectionStore } from './connections';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import type { HubConnections } from '@hatchery/platform/aws/management';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';
import type { Pacer } from './budget';
import type { DeliveryLedger } from './ledger';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export const fanOutLimits = {
  /** Posts in flight per fan-out (the listener's own, and each shard's). */
  concurrency: 64,
  /**
   * Connections a shard claims in the delivery ledger at a time (ledger.ts): a claim's round trip must take less
   * than posting the run before it, or the ledger paces the posts; a shard cut off mid-way loses at most three runs'
   * frames, which those clients see as a gap.
   */
  claimRun: 256,
} as const;

export interface Delivery {
  sent: number;
  /** Connections API Gateway reported gone; they were removed from the store. */
  gone: number;
  failed: number;
  /** Never attempted: the shard invocation's deadline came first. */
  skipped: number;
}

export const noDelivery: Delivery = { sent: 0, gone: 0, failed: 0, skipped: 0 };

export const addDeliveries = (a: Delivery, b: Delivery): Delivery => ({
  sent: a.sent + b.sent,
  gone: a.gone + b.gone,
  failed: a.failed + b.failed,
  skipped: a.skipped + b.skipped,
});

/** The pages, each one requested as soon as the one before it is handed out, so work never waits for a page it could have had. */
async function* prefetched<T>(pages: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = pages[Symbol.asyncIterator]();
  let next = iterator.next();
  for (;;) {
    const current = await next;
    if (current.done) return;
    next = iterator.next();
    // Awaited on the next turn; marked handled now so a failure in between is not reported as unhandled.
    next.catch(() => undefined);
    yield current.value;
  }
}

/**
 * Calls `work` for every item of the pages with at most `concurrency` calls in
 * flight, starting before the last page is read; once `stopped()` says so, no
 * further item is taken.
 */
export async function forEachBounded<T>(
  pages: AsyncIterable<T[]>,
  concurrency: number,
  work: (item: T) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<void> {
  async function* items() {
    for await (const page of prefetched(pages)) yield* page;
  }
  const iterator = items();
  // An async generator queues concurrent next() calls, so the workers share it safely.
  const worker = async () => {
    while (!stopped()) {
      const next = await iterator.next();
      if (next.done) return;
      await work(next.value);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
}

export interface FanOutParts {
  connections: HubConnections;
  store: ConnectionStore;
  concurrency: number;
  log: Logger;
  /** The posts' pacer (./budget.ts): the lane's share of the fan-out budget, and what 429s taught it. */
  pace: Pacer;
}

/** How long a post that never reached API Gateway (or a claim that failed) waits before it is tried again, doubling up to a second. */
const unsentBackoffMs = (attempt: number) => Math.min(1_000, 50 * 2 ** attempt);

/**
 * Posts one frame to every recipient through the management API, removing
 * those API Gateway reports gone, each post when `pace` lets it go. A post
 * API Gateway refused without applying it (429, or never reached) is tried
 * again until `stopAt`, budget or not: a 429 slows the pacer, since the
 * quota, not the recipient, was at fault. A post that failed in a way that
 * may hide a delivered frame (a timeout after sending, a 5xx) is never tried
 * again: a frame twice is worse than a gap the client sees and reads past.
 * Nothing waits past `stopAt` (epoch ms): once a post cannot go in time, no
 * further recipient is taken from `recipients` (a shard's next run is then
 * never claimed), and those taken are counted skipped; a caller that knows
 * its audience counts the rest.
 */
export async function post(recipients: AsyncIterable<string[]>, frame: string | Uint8Array, parts: FanOutParts, stopAt = Infinity): Promise<Delivery> {
  const { connections, concurrency, log, pace } = parts;
  const delivery = { ...noDelivery };
  const data = typeof frame === 'string' ? new TextEncoder().encode(frame) : frame;
  const throttlesBefore = pace.throttles;
  let late = false;
  const work = async (connectionId: string) => {
    for (let unsent = 0; ; ) {
      if (late || !(await pace.take(stopAt))) {
        late = true;
        delivery.skipped++;
        return;
      }
      let outcome: Awaited<ReturnType<HubConnections['post']>>;
      try {
        outcome = await connections.post(connectionId, data);
      } catch (error) {
        delivery.failed++;
        log.warn({ err: error, connectionId }, 'could not deliver to a hub connection');
        return;
      }
      if (outcome === 'sent') {
        delivery.sent++;
        return;
      }
      if (outcome === 'gone') {
        delivery.gone++;
        await forget(connectionId, parts, stopAt);
        return;
      }
      if (outcome.refused === 'throttled') {
        pace.throttled(outcome.retryAfterMs);
        continue;
      }
      const wait = unsentBackoffMs(unsent++);
      if (Date.now() + wait >= stopAt) {
        late = true;
        delivery.skipped++;
        log.warn({ err: outcome.error, connectionId }, 'could not reach the management API before the deadline');
        return;
      }
      await sleep(wait);
    }
  };
  await forEachBounded(recipients, concurrency, work, () => late);
  const throttles = pace.throttles - throttlesBefore;
  if (throttles) log.warn({ throttles }, 'fan-out slowed down by 429s from the management API');
  if (delivery.skipped) log.error({ skipped: delivery.skipped }, 'fan-out stopped at its deadline');
  return delivery;
}

/**
 * Removes a connection API Gateway reported gone. A failure (DynamoDB
 * throttling included) is only logged: the record's TTL removes it anyway,
 * and it is no reason to slow the posts. Past the deadline a removal could
 * outlast the invocation's margin, so it is left to the TTL.
 */
async function forget(connectionId: string, { store, log }: FanOutParts, stopAt: number): Promise<void> {
  if (Date.now() >= stopAt) return;
  try {
    await store.remove(connectionId);
  } catch (error) {
    log.warn({ err: error, connectionId }, 'could not remove a gone hub connection');
  }
}

/**
 * What one shard invocation is handed (the fan-out function's event): the
 * event it posts (its ledger key, `marketChanged#<version>`), the encoded
 * frame, the shard to post it to, and the shard's part of the broadcast
 * budget (absent: no budget). The part is the budget's, never reduced by
 * what 429s taught: that lesson is the shard's pacer's, kept by its fan-out
 * function instance, and a rate reduced by another pacer's lesson would be
 * reduced twice.
 */
export const shardJobSchema = z.object({
  event: z.string().check(z.minLength(1), z.maxLength(200)),
  shard: z.int().check(z.gte(0), z.lte(connectionShards - 1)),
  frame: z.string().check(z.minLength(1), z.maxLength(webSocketApiQuotas.managementPayloadBytes)),
  postsPerSecond: z.optional(z.number().check(z.positive())),
});

export type ShardJob = z.infer<typeof shardJobSchema>;

/** What a shard answers: its delivery, and what 429s left of its rate (./budget.ts, Pacer.factor). */
export interface ShardDelivery extends Delivery {
  paceFactor: number;
}

/** Items already in hand, as the pages `post` takes. */
export async function* inOnePage<T>(items: T[]): AsyncIterable<T[]> {
  if (items.length) yield items;
}

/**
 * The recipients in claimed runs of `run`: each run is claimed in the ledger
 * before its first post, so a retry of the shard (after a timeout, a crash)
 * starts after the last claim and never posts to a connection twice. The
 * next run's claim is written while this one is posted, so the ledger's round
 * trip never holds the posts up. A claim another invocation got past ends
 * the runs.
 */
async function* claimedRuns(recipients: string[], run: number, claim: (through: string) => Promise<boolean>, stopAt: number): AsyncIterable<string[]> {
  const runAt = (start: number) => recipients.slice(start, start + run);
  const claimed = (start: number) => (start < recipients.length ? claim(runAt(start).at(-1)!) : Promise.resolve(false));
  let next = claimed(0);
  // Nothing is claimed past the deadline, so a later invocation of the event may still post what this one skips.
  for (let start = 0; start < recipients.length && Date.now() < stopAt; start += run) {
    if (!(await next)) return;
    next = Date.now() < stopAt ? claimed(start + run) : Promise.resolve(false);
    yield runAt(start);
  }
}

/**
 * One shard's part of a broadcast. The shard is read whole, in connection id
 * order, and what an earlier invocation of the same event claimed is skipped;
 * then the rest is posted in claimed runs. A failure before the first claim
 * fails the invocation having sent nothing; after it, nothing throws, and
 * posting stops at `stopAt`, so the invocation returns before Lambda's
 * timeout. An empty shard costs one read and no post.
 */
export async function deliverShard(job: ShardJob, parts: FanOutParts, ledger: DeliveryLedger, stopAt = Infinity): Promise<ShardDelivery> {
  const recipients: string[] = [];
  for await (const page of parts.store.shard(job.shard)) recipients.push(...page);
  if (!recipients.length) return { ...noDelivery, paceFactor: parts.pace.factor };
  recipients.sort();
  const claimed = await ledger.claimedThrough(job.event, job.shard);
  const rest = claimed === undefined ? recipients : recipients.filter((id) => id > claimed);
  parts.pace.setTarget(job.postsPerSecond ?? Number.POSITIVE_INFINITY);
  let claimFailure: unknown;
  let overtaken = false;
  const claimant = randomUUID();
  // A claim that failed (a DynamoDB timeout, a throttle) is tried again while there is time: the claimant makes the retry safe.
  const claim = async (through: string) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const won = await ledger.claimShard(job.event, job.shard, through, claimant);
        overtaken ||= !won;
        return won;
      } catch (error) {
        const wait = unsentBackoffMs(attempt);
        if (attempt >= deliveryDeadlines.claimRetries || Date.now() + wait >= stopAt) {
          claimFailure = error;
          return false;
        }
        await sleep(wait);
      }
    }
  };
  const runs = claimedRuns(rest, fanOutLimits.claimRun, claim, stopAt);
  const delivery = await post(runs, job.frame, parts, stopAt);
  const attempted = delivery.sent + delivery.gone + delivery.failed;
  if (claimFailure !== undefined && attempted === 0) throw claimFailure;
  const unclaimed = rest.length - attempted - delivery.skipped;
  const answer = { ...delivery, paceFactor: parts.pace.factor };
  if (unclaimed === 0) return answer;
  if (overtaken && claimFailure === undefined) {
    // The invocation that claimed past this one posts the rest.
    parts.log.warn({ shard: job.shard, unclaimed }, 'a shard stopped where another invocation of its event had claimed');
    return answer;
  }
  parts.log.error(
    { err: claimFailure, shard: job.shard, unclaimed },
    claimFailure === undefined
      ? 'a shard stopped at its deadline before claiming all its connections'
      : 'a shard stopped: its connections could not be claimed',
  );
  return { ...answer, skipped: delivery.skipped + unclaimed };
}
