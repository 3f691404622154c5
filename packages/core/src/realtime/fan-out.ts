import { limits } from '../limits';
import * as z from '@hatchery/platform/schema';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import type { ConnectionStore } from './connections';
import type { HubConnections } from '@hatchery/platform/aws/management';
import { isThrottled } from '@hatchery/platform/aws/throttling';
import { pacer, unpaced, type Pacer } from './budget';

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

/** Calls `work` for every item of the pages with at most `concurrency` calls in flight, starting before the last page is read. */
export async function forEachBounded<T>(pages: AsyncIterable<T[]>, concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  async function* items() {
    for await (const page of prefetched(pages)) yield* page;
  }
  const iterator = items();
  // An async generator queues concurrent next() calls, so the workers share it safely.
  const worker = async () => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
}

export interface FanOutParts {
  connections: HubConnections;
  store: ConnectionStore;
  concurrency: number;
  log: Logger;
  /** The posts' part of the fan-out budget (./budget.ts); none, they go as fast as `concurrency` lets them. */
  pace?: Pacer;
}

/**
 * Posts one frame to every recipient through the management API, removing
 * those API Gateway reports gone, each post when `pace` lets it go. A post
 * answered 429 slows the pacer down and is tried again until `stopAt`, since
 * the budget, not the recipient, was at fault. One connection failing
 * otherwise (store error) never stops the others, and is not tried again
 * here beyond the management client's own retries, since trying the whole set
 * again would re-send to the rest. Posting stops at `stopAt` (epoch ms),
 * counting the rest as skipped.
 */
export async function post(recipients: AsyncIterable<string[]>, frame: string | Uint8Array, parts: FanOutParts, stopAt = Infinity): Promise<Delivery> {
  const { connections, store, concurrency, log, pace = unpaced } = parts;
  const delivery = { ...noDelivery };
  const data = typeof frame === 'string' ? new TextEncoder().encode(frame) : frame;
  await forEachBounded(recipients, concurrency, async (connectionId) => {
    for (;;) {
      await pace.take();
      if (Date.now() >= stopAt) {
        delivery.skipped++;
        return;
      }
      try {
        if ((await connections.post(connectionId, data)) === 'sent') {
          delivery.sent++;
          return;
        }
        delivery.gone++;
        // Past the deadline, a removal (up to its own call deadline) could outlast the invocation's margin; the record's TTL removes it anyway.
        if (Date.now() < stopAt) await store.remove(connectionId);
        return;
      } catch (error) {
        if (pace !== unpaced && isThrottled(error)) {
          pace.throttled(error);
          continue;
        }
        delivery.failed++;
        log.warn({ err: error, connectionId }, 'could not deliver to a hub connection');
        return;
      }
    }
  });
  if (pace.throttles) log.warn({ throttles: pace.throttles }, 'fan-out slowed down by 429s from the management API');
  if (delivery.skipped) log.error({ skipped: delivery.skipped }, 'fan-out stopped at its deadline');
  return delivery;
}

/**
 * What one shard invocation is handed (the fan-out function's event): the
 * encoded frame, the shard to post it to, and the shard's part of the
 * broadcast budget (absent: no budget).
 */
export const shardJobSchema = z.object({
  shard: z.int().check(z.gte(0), z.lte(limits.hub.connectionShards - 1)),
  frame: z.string().check(z.minLength(1), z.maxLength(limits.hub.managementPayloadBytes)),
  postsPerSecond: z.optional(z.number().check(z.positive())),
});

export type ShardJob = z.infer<typeof shardJobSchema>;

/** Items already in hand, as the pages `post` takes. */
export async function* inOnePage<T>(items: T[]): AsyncIterable<T[]> {
  if (items.length) yield items;
}

/**
 * One shard's part of a broadcast: the whole shard is read before the first
 * post, so a failing read fails the invocation having sent nothing, and its
 * retry sends every connection the frame once. After the first post it never
 * throws, and it stops posting at `stopAt`, so nothing makes the invocation
 * fail (and be retried) once it has sent anything. An empty shard costs one
 * read and no post.
 */
export async function deliverShard(job: ShardJob, parts: FanOutParts, stopAt = Infinity): Promise<Delivery> {
  const recipients: string[] = [];
  for await (const page of parts.store.shard(job.shard)) recipients.push(...page);
  const pace = job.postsPerSecond === undefined ? parts.pace : pacer(job.postsPerSecond);
  return post(inOnePage(recipients), job.frame, { ...parts, pace }, stopAt);
}
