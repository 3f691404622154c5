import * as signalR from '@microsoft/signalr';
import pg from 'pg';
import { expect } from 'vitest';
import { indexerActivity } from '@hatchery/local/simulate';
import type { TestStack } from '../../support/stack';

export type Hub = signalR.HubConnection;

/** The stock SignalR client, through negotiate or straight to the WebSocket. */
export async function connectHub(baseUrl: string, options: { skipNegotiation?: boolean; keepAliveMs?: number; serverTimeoutMs?: number } = {}): Promise<Hub> {
  const hub = new signalR.HubConnectionBuilder()
    .withUrl(`${baseUrl}/hubs/events`, {
      transport: signalR.HttpTransportType.WebSockets,
      skipNegotiation: options.skipNegotiation ?? false,
    })
    .configureLogging(signalR.LogLevel.None)
    .build();
  if (options.serverTimeoutMs) hub.serverTimeoutInMilliseconds = options.serverTimeoutMs;
  if (options.keepAliveMs) hub.keepAliveIntervalInMilliseconds = options.keepAliveMs;
  await hub.start();
  return hub;
}

/** Everything the hub sends one client for `event`, in arrival order. */
export function record<T = Record<string, unknown>>(hub: Hub, event: string): T[] {
  const received: T[] = [];
  hub.on(event, (payload: T) => received.push(payload));
  return received;
}

/** Waits for `check` to hold, checked every 10 ms; the timeout only ends a wait for what never comes, within a test's 30 s. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A wallet address for test `n`, distinct from the demo wallets. */
export const wallet = (n: number) => `0x${'a'.repeat(8)}${n.toString(16).padStart(32, '0')}`;

/** The indexer's writes (each committed with NOTIFY indexer_live_query) against the stack's database. */
export function indexer(stack: TestStack) {
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  pool.on('error', () => undefined);
  let block = 5_000_000n;
  let request = 900_000n;
  let token = 700_000n;
  const activity = indexerActivity(pool);
  return {
    ...activity,
    pool,
    nextBlock: () => String(++block),
    /** A fulfilment for `buyer` in a new block (or the given one); returns what forgeFulfilled must carry. */
    async fulfilFor(buyer: string, at?: string) {
      const fulfilment = {
        requestId: String(++request),
        buyer,
        tokenId: String(++token),
        editionId: String(Number(token % 40n) + 1),
        block: at ?? String(++block),
      };
      await activity.fulfil(fulfilment);
      // The buyer's stream numbers each event; the tests of the numbering check it, the others only that it is there.
      return {
        requestId: fulfilment.requestId,
        tokenId: fulfilment.tokenId,
        editionId: fulfilment.editionId,
        buyer: buyer.toLowerCase(),
        sequence: expect.any(Number),
      };
    },
    async listToken() {
      await activity.list({ tokenId: String(++token), seller: wallet(999), price: '1000000000000000000', block: String(++block) });
    },
    /** The listings a marketChanged must report now: active listings, and the highest block over all of them (its version aside). */
    async snapshot() {
      const { rows } = await pool.query<{ count: number; maxBlock: string }>(
        `SELECT (count(*) FILTER (WHERE status = 'Active'))::int AS count, coalesce(max(updated_at_block), 0)::text AS "maxBlock" FROM indexer.listings`,
      );
      return rows[0]!;
    },
    end: () => pool.end(),
  };
}

/** A marketChanged's version: any whole number above 0, checked to grow by the tests that see several. */
export const anyVersion = { version: expect.any(Number) as unknown as number };

/** What a marketChanged says of the listings, its version aside. */
export const listingsOf = ({ version: _version, ...listings }: { count: number; maxBlock: string; version: number }) => listings;

/** Versions only grow, whatever the blocks do. */
export const versionsGrow = (events: readonly { version: number }[]) =>
  events.every((event, index) => index === 0 || event.version > events[index - 1]!.version);
