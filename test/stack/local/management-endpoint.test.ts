import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSizes } from '@hatchery/local/demo-data';
import { connectHub, indexer, record, waitFor, wallet, type Hub } from '../realtime/support';
import { managementProxy, type ManagementCall, type ManagementProxy } from '../../support/management-proxy';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * WEBSOCKET_MANAGEMENT_ENDPOINT in front of the local gateway's management
 * API, as a team puts a recording or throttling proxy there: every post of the
 * stack goes through it, $default's handshake answer, the fan-out function's
 * broadcast shards (run in the local Lambda service's worker threads) and the
 * listener's own forgeFulfilled.
 */

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
let proxy: ManagementProxy;
let hub: Hub | undefined;
/** Every call the recording proxy forwarded to the stack. */
const forwarded: ManagementCall[] = [];

const posts = () => forwarded.filter((call) => call.method === 'POST' && call.path.startsWith('/@connections/'));
/** The arguments of each `event` the proxy saw posted. */
const postedEvents = <T>(event: string): T[] =>
  posts().flatMap((call) =>
    call.body
      .split('\u001e')
      .filter(Boolean)
      .map((message) => JSON.parse(message) as { target?: string; arguments?: T[] })
      .filter((message) => message.target === event)
      .map((message) => message.arguments![0]!),
  );

beforeAll(async () => {
  proxy = await managementProxy(
    () => stack.url,
    (call) => (forwarded.push(call), 'forward'),
  );
  // Every broadcast shard goes to the fan-out function, none is small enough for the listener to post itself.
  stack = await startTestStack({ demoData: demoSizes.demo, managementEndpoint: proxy.url, listener: { smallAudience: 0 } });
  writes = indexer(stack);
});
afterAll(async () => {
  await hub?.stop();
  await writes?.end();
  await stack?.stop();
  proxy?.close();
});

describe('WEBSOCKET_MANAGEMENT_ENDPOINT', () => {
  it('is the endpoint of every management call: the handshake answer, a broadcast’s shards and a forgeFulfilled', async () => {
    expect(process.env.WEBSOCKET_MANAGEMENT_ENDPOINT).not.toBe(stack.url);
    hub = await connectHub(stack.url);
    expect(posts().filter((call) => call.body === '{}\u001e').length, 'the handshake answer').toBe(1);

    const buyer = wallet(1);
    await hub.invoke('Subscribe', buyer);
    const market = record<{ count: number; maxBlock: string }>(hub, 'marketChanged');
    const forge = record<{ requestId: string }>(hub, 'forgeFulfilled');
    const invokesBefore = stack.lambda.stats().attempts;

    await writes.listToken();
    const expected = await writes.snapshot();
    await waitFor(() => market.some((event) => event.count === expected.count && event.maxBlock === expected.maxBlock), 'the marketChanged');
    expect(postedEvents<{ count: number; maxBlock: string }>('marketChanged'), 'the broadcast').toContainEqual(expect.objectContaining(expected));
    expect(stack.lambda.stats().attempts, 'handed to the fan-out function').toBeGreaterThan(invokesBefore);

    const fulfilment = await writes.fulfilFor(buyer);
    await waitFor(() => forge.some((event) => event.requestId === fulfilment.requestId), 'the forgeFulfilled');
    expect(postedEvents<{ requestId: string }>('forgeFulfilled'), 'the forgeFulfilled').toContainEqual(
      expect.objectContaining({ requestId: fulfilment.requestId }),
    );
  });
});
