import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryLimits } from '@hatchery/core/webhooks/delivery';
import { advanceCheckpoint, demoSizes } from '@hatchery/local/demo-data';
import { report } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { indexer, waitFor, wallet } from '../realtime/support';

/** A delivery as a receiver saw it: when, its headers and its body. */
interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A receiver on loopback that misbehaves on its first request as told (an error, a hang past the delivery's timeout,
 * a reset connection, a 429 with Retry-After), then accepts every one after.
 */
async function receiver(first: 'ok' | '500' | 'hang' | 'reset' | '429') {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ at: Date.now(), headers: request.headers, body });
      if (received.length > 1 || first === 'ok') return void response.writeHead(204).end();
      if (first === '500') response.writeHead(500).end('no');
      else if (first === '429') response.writeHead(429, { 'retry-after': '7' }).end();
      else if (first === 'reset') request.socket.destroy();
      // 'hang': never answered; the connection closes when the delivery gives up.
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => server.close() };
}

const secrets = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_QmVmb3JlIHRoZSByb3RhdGlvbiwgYWZ0ZXIgaXQ='];

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
let receivers: Record<'good' | 'error' | 'hang' | 'reset' | 'throttled' | 'finalized', Awaited<ReturnType<typeof receiver>>>;

beforeAll(async () => {
  receivers = {
    good: await receiver('ok'),
    error: await receiver('500'),
    hang: await receiver('hang'),
    reset: await receiver('reset'),
    throttled: await receiver('429'),
    finalized: await receiver('ok'),
  };
  const endpoints = Object.entries(receivers).map(([name, { url }]) => ({
    name,
    url,
    types: ['forge.fulfilled', 'sale.completed'],
    finality: name === 'finalized' ? 'finalized' : 'latest',
    secrets: name === 'good' ? secrets : [secrets[0]],
  }));
  stack = await startTestStack({ demoData: demoSizes.demo, env: { WEBHOOK_ENDPOINTS: JSON.stringify(endpoints) } });
  writes = indexer(stack);
  await waitFor(
    async () => (await stack.sql('SELECT count(*)::int AS n FROM hatchery.webhook_dispatch'))[0]?.n === endpoints.length,
    'every endpoint placed in the log',
    30_000,
  );
});

afterAll(async () => {
  await writes?.end();
  await stack?.stop();
  for (const each of Object.values(receivers ?? {})) each.close();
});

describe('webhooks', () => {
  it('deliver a fulfilment signed in the Standard Webhooks format, at once to a healthy endpoint whatever the others do, and each again with the same id where an attempt failed', async () => {
    const buyer = wallet(11);
    const written = Date.now();
    const fulfilment = await writes.fulfilFor(buyer);
    await waitFor(() => receivers.good.received.length === 1, 'the healthy endpoint’s delivery');
    const [delivery] = receivers.good.received;
    report(`a fulfilment reached a latest endpoint ${delivery!.at - written} ms after it was written`);
    // Whatever the others do: it came while the hanging endpoint's first attempt, handed on in the same pass, still
    // had its timeout to run, so it never waited behind that attempt.
    await waitFor(() => receivers.hang.received.length >= 1, 'the hanging endpoint’s first attempt');
    expect(delivery!.at).toBeLessThan(receivers.hang.received[0]!.at + deliveryLimits.timeoutMs);
    // Each secret of the rotation verifies it alone; a changed body, an old timestamp, another secret do not.
    const headers = delivery!.headers as Record<string, string>;
    for (const secret of secrets) expect(new Webhook(secret).verify(delivery!.body, headers)).toMatchObject({ type: 'forge.fulfilled' });
    expect(() => new Webhook(secrets[0]!).verify(delivery!.body.replace(fulfilment.requestId, '1'), headers)).toThrow();
    expect(() => new Webhook(secrets[0]!).verify(delivery!.body, { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 301) })).toThrow();
    expect(() => new Webhook('whsec_d3JvbmcgYnV0IHdlbGwgZm9ybWVkIHNlY3JldCE=').verify(delivery!.body, headers)).toThrow();
    const event = JSON.parse(delivery!.body);
    expect(event).toMatchObject({ type: 'forge.fulfilled', id: headers['webhook-id'], payload: { requestId: fulfilment.requestId, buyer } });

    // Each failing endpoint is tried again, with the same id and body; a 429 no sooner than its Retry-After.
    for (const name of ['error', 'hang', 'reset', 'throttled'] as const) {
      await waitFor(() => receivers[name].received.length >= 2, `the ${name} endpoint’s second attempt`, 40_000);
      const [firstTry, secondTry] = receivers[name].received;
      expect(secondTry!.headers['webhook-id'], name).toBe(headers['webhook-id']);
      expect(secondTry!.body, name).toBe(delivery!.body);
      if (name === 'throttled') expect(secondTry!.at - firstTry!.at).toBeGreaterThanOrEqual(7_000);
    }
    expect(receivers.good.received).toHaveLength(1);
    // A finalized endpoint gets it once the finalized block covers it, not before.
    expect(receivers.finalized.received).toHaveLength(0);
    const block = JSON.parse(delivery!.body).blockNumber as string;
    await advanceCheckpoint(writes.pool, BigInt(block));
    await writes.pool.query(`SELECT pg_notify('indexer_live_query', '[]')`);
    await waitFor(() => receivers.finalized.received.length === 1, 'the finalized endpoint’s delivery');
    expect(receivers.finalized.received[0]!.headers['webhook-id']).toBe(headers['webhook-id']);
  }, 90_000);
});
