import type { Logger } from '@hatchery/core/logger';
import type { ConnectionStore } from '@hatchery/core/realtime/connections';
import type { HubConnections } from '@hatchery/core/realtime/management';

export interface Delivery {
  sent: number;
  /** Connections API Gateway reported gone; they were removed from the store. */
  gone: number;
  failed: number;
}

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

/** Sends one message to a set of connections through the management API, forgetting those that are gone. */
export function fanOut(options: { connections: HubConnections; store: ConnectionStore; concurrency: number; log: Logger }) {
  const { connections, store, concurrency, log } = options;
  const encoder = new TextEncoder();
  const deliver = async (recipients: AsyncIterable<string[]>, message: string): Promise<Delivery> => {
    const delivery: Delivery = { sent: 0, gone: 0, failed: 0 };
    const data = encoder.encode(message);
    await forEachBounded(recipients, concurrency, async (connectionId) => {
      try {
        if ((await connections.post(connectionId, data)) === 'sent') {
          delivery.sent++;
          return;
        }
        delivery.gone++;
        await store.remove(connectionId);
      } catch (error) {
        // One connection failing (throttled, store error) must not stop the others.
        delivery.failed++;
        log.warn({ err: error, connectionId }, 'could not deliver to a hub connection');
      }
    });
    return delivery;
  };
  return {
    toAll: (data: string) => deliver(store.all(), data),
    toGroup: (address: string, data: string) => deliver(store.group(address), data),
  };
}
