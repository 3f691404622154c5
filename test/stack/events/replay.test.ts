import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../../support/stack';
import { indexer, waitFor, wallet } from '../realtime/support';

let stack: TestStack;
let writes: ReturnType<typeof indexer>;

type EventPage = {
  items: Array<{ id: string; position: number; type: string; entity: string; wallets: string[]; payload: Record<string, unknown> }>;
  nextCursor: string;
  hasMore: boolean;
};

async function events(query: Record<string, string> = {}): Promise<EventPage> {
  const response = await stack.get(`/events?${new URLSearchParams(query)}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as EventPage;
}

beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo });
  writes = indexer(stack);
  // The log starts at the demo data's newest block once the listener leads.
  await waitFor(async () => (await stack.sql('SELECT 1 FROM hatchery.event_log')).length === 1, 'the event log to start', 30_000);
});

afterAll(async () => {
  await writes?.end();
  await stack?.stop();
});

describe('GET /events', () => {
  it('answers a fulfilment and a sale written after it started, for their wallets, and reads on from a cursor with no gap and no duplicate', async () => {
    const start = await events();
    const buyer = wallet(1);
    const fulfilment = await writes.fulfilFor(buyer);
    await writes.list({ tokenId: '880001', seller: wallet(2), price: '5', block: writes.nextBlock() });
    await writes.sell({ tokenId: '880001', buyer: wallet(3), block: writes.nextBlock() });
    let seen: EventPage['items'] = [];
    let cursor = start.nextCursor;
    await waitFor(async () => {
      const page = await events({ after: cursor });
      seen = [...seen, ...page.items];
      cursor = page.nextCursor;
      return seen.some((event) => event.type === 'sale.completed');
    }, 'the sale in the log');
    expect(seen.map((event) => event.type)).toEqual(['forge.fulfilled', 'listing.opened', 'sale.completed', 'listing.closed']);
    expect(seen.map((event) => event.position)).toEqual(seen.map((_, index) => seen[0]!.position + index));
    expect(seen[0]).toMatchObject({
      entity: fulfilment.requestId,
      wallets: [buyer],
      payload: { requestId: fulfilment.requestId, tokenId: fulfilment.tokenId },
    });
    expect((await events({ after: cursor })).items).toEqual([]);
    const mine = await events({ after: start.nextCursor, wallet: buyer.toUpperCase().replace('0X', '0x') });
    expect(mine.items.map((event) => event.type)).toEqual(['forge.fulfilled']);
    const sales = await events({ after: start.nextCursor, type: 'sale.completed', finality: 'latest' });
    expect(sales.items.map((event) => event.type)).toEqual(['sale.completed']);
  });

  it('refuses bad input with a 422 naming the field, and a cursor past retention with a 410 naming the oldest kept', async () => {
    for (const [query, field] of [
      [{ after: 'not-a-cursor' }, 'after'],
      [{ after: 'x'.repeat(65) }, 'after'],
      [{ type: 'forge.exploded' }, 'type'],
      [{ wallet: '0x123' }, 'wallet'],
      [{ finality: 'eventually' }, 'finality'],
      [{ pageSize: '0' }, 'pageSize'],
      [{ pageSize: '1001' }, 'pageSize'],
    ] as const) {
      const response = await stack.get(`/events?${new URLSearchParams(query)}`);
      expect(response.status, JSON.stringify(query)).toBe(422);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(Object.keys(((await response.json()) as { errors: object }).errors)).toEqual([field]);
    }
    const first = (await events({ pageSize: '1' })).items[0]!;
    await stack.sql(`DELETE FROM hatchery.events WHERE position <= $1`, [first.position]);
    const gone = await stack.get(`/events?after=${Buffer.from('p0').toString('base64url')}`);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({ status: 410, oldestPosition: String(first.position + 1) });
  });
});
