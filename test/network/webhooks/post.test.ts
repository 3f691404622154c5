import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook, type WebhookPost } from '@hatchery/core/webhooks/post';
import { webhookHeaders } from '@hatchery/core/webhooks/signature';
import { slackMs, timed } from '../../support/pace';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver on the loopback interface: its URL, and what reached it. */
interface Receiver {
  url: string;
  port: number;
  received: Received[];
  connections: net.Socket[];
}

const servers: net.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (server instanceof http.Server) server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

async function listening(server: net.Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

async function receiver(answer: (response: http.ServerResponse, request: http.IncomingMessage) => void): Promise<Receiver> {
  const received: Received[] = [];
  const connections: net.Socket[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString() });
      answer(response, request);
    });
  });
  server.on('connection', (socket) => connections.push(socket));
  const port = await listening(server);
  return { url: `http://127.0.0.1:${port}/hook`, port, received, connections };
}

const body = JSON.stringify({ type: 'sale.completed', data: { listingId: '12', price: '1000' } });
const post = (fields: Partial<WebhookPost> & { url: string }) =>
  postWebhook({ body, headers: {}, allowPrivate: true, connectTimeoutMs: 1_000, timeoutMs: 3_000, maxResponseBytes: 4_096, ...fields });
const closed = (socket: net.Socket) => new Promise<void>((done) => (socket.destroyed ? done() : socket.once('close', () => done())));

describe('a webhook POST', () => {
  it('is delivered on a 2xx, with the JSON body, its content type and the signature, which the receiver verifies', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const server = await receiver((response) => response.writeHead(204).end());
    const headers = webhookHeaders({ id: 'evt_42_orders', timestamp: new Date(), body, secrets: [secret] });
    expect(await post({ url: server.url, headers: { ...headers } })).toEqual({ kind: 'delivered', status: 204 });
    const [request] = server.received;
    expect(request?.body).toBe(body);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe('evt_42_orders');
    expect(new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>)).toEqual(JSON.parse(body));
  });

  it('is refused on a 500, with its status and no more than the status text', async () => {
    const server = await receiver((response) => response.writeHead(500, { 'retry-after': '30' }).end('stack trace: secret things'));
    expect(await post({ url: server.url })).toEqual({ kind: 'refused', status: 500, reason: 'HTTP 500 Internal Server Error' });
  });

  it('is refused on a 429 with the Retry-After seconds, and on a 503 until its HTTP date', async () => {
    const tooMany = await receiver((response) => response.writeHead(429, { 'retry-after': '2' }).end());
    expect(await post({ url: tooMany.url })).toEqual({ kind: 'refused', status: 429, retryAfterMs: 2_000, reason: 'HTTP 429 Too Many Requests' });
    const unavailable = await receiver((response) => response.writeHead(503, { 'retry-after': new Date(Date.now() + 10_000).toUTCString() }).end());
    const before = Date.now();
    const outcome = await post({ url: unavailable.url });
    const tookMs = Date.now() - before;
    expect(outcome).toMatchObject({ kind: 'refused', status: 503, reason: 'HTTP 503 Service Unavailable' });
    // 10 s after the answer, to the second (an HTTP date has no less), less the time the answer took to be read.
    expect(outcome.kind === 'refused' && outcome.retryAfterMs).toBeGreaterThan(9_000 - tookMs);
    expect(outcome.kind === 'refused' && outcome.retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('honours a Retry-After of an hour at most', async () => {
    const server = await receiver((response) => response.writeHead(429, { 'retry-after': '86400' }).end());
    expect(await post({ url: server.url })).toMatchObject({ kind: 'refused', retryAfterMs: 3_600_000 });
  });

  it('follows no redirect: a 302 is refused, and its target never hears of it', async () => {
    const target = await receiver((response) => response.writeHead(200).end());
    const redirecting = await receiver((response) => response.writeHead(302, { location: target.url }).end());
    expect(await post({ url: redirecting.url })).toEqual({ kind: 'refused', status: 302, reason: 'HTTP 302 Found: redirects are not followed' });
    expect(redirecting.received).toHaveLength(1);
    expect(target.connections).toHaveLength(0);
  });

  it('is unknown when the receiver read it and answers nothing within the time allowed', async () => {
    const server = await receiver(() => {});
    const { value: outcome, ms, lagMs } = await timed(() => post({ url: server.url, timeoutMs: 300 }));
    expect(outcome).toEqual({ kind: 'unknown', reason: 'no answer within 300 ms' });
    expect(ms).toBeLessThan(300 + slackMs({ lagMs }));
    expect(server.received).toHaveLength(1);
    await closed(server.connections[0]!);
  });

  it('is unknown when the receiver resets the connection after reading it', async () => {
    const server = await receiver((_, request) => request.socket.destroy());
    expect(await post({ url: server.url })).toMatchObject({ kind: 'unknown', reason: expect.stringMatching(/socket hang up|ECONNRESET/) });
    expect(server.received).toHaveLength(1);
  });

  it.each([
    ['declared in its Content-Length', { 'content-length': String(1 << 20) }],
    ['streamed without a length', {}],
  ])('reads a few KB of a 1 MB answer %s, then closes the connection', async (_, headers) => {
    const server = await receiver((response) => {
      response.writeHead(200, headers);
      // All but the last byte: a client that read the whole answer would wait for the end until it timed out.
      response.write(Buffer.alloc((1 << 20) - 1, 'x'));
    });
    const timeoutMs = 5_000;
    const started = performance.now();
    expect(await post({ url: server.url, timeoutMs, agent: new http.Agent({ keepAlive: true }) })).toEqual({ kind: 'delivered', status: 200 });
    // Delivered, and before its timeout: it did not wait for the byte that never comes.
    expect(performance.now() - started).toBeLessThan(timeoutMs);
    await closed(server.connections[0]!);
  });

  it('keeps a connection alive across posts when the answers are short', async () => {
    const server = await receiver((response) => response.writeHead(200).end('ok'));
    const agent = new http.Agent({ keepAlive: true });
    for (let i = 0; i < 5; i++) expect(await post({ url: server.url, agent })).toEqual({ kind: 'delivered', status: 200 });
    expect(server.received).toHaveLength(5);
    expect(server.connections).toHaveLength(1);
    agent.destroy();
  });

  it('is unsent when nothing listens', async () => {
    const server = await receiver(() => {});
    const url = server.url;
    servers.pop()?.close();
    expect(await post({ url })).toMatchObject({ kind: 'unsent', reason: expect.stringContaining('ECONNREFUSED') });
  });

  it('is unsent when the connection is not made within its time: a TLS handshake that never ends', async () => {
    const silent = net.createServer((socket) => socket.resume());
    const port = await listening(silent);
    const { value: outcome, ms, lagMs } = await timed(() => post({ url: `https://127.0.0.1:${port}/hook`, connectTimeoutMs: 200 }));
    expect(outcome).toEqual({ kind: 'unsent', reason: 'no connection within 200 ms' });
    expect(ms).toBeLessThan(200 + slackMs({ lagMs }));
  });

  it('is unsent for a host that does not resolve', async () => {
    expect(await post({ url: 'http://no-such-host.invalid/hook', allowPrivate: false })).toMatchObject({ kind: 'unsent' });
  });

  it('is unsent to a loopback address unless private addresses are allowed, and the receiver sees no connection', async () => {
    const server = await receiver((response) => response.writeHead(200).end());
    expect(await post({ url: server.url, allowPrivate: false })).toEqual({ kind: 'unsent', reason: '127.0.0.1 is not a public address' });
    expect(await post({ url: `http://[::ffff:127.0.0.1]:${server.port}/hook`, allowPrivate: false })).toEqual({
      kind: 'unsent',
      reason: '::ffff:7f00:1 is not a public address',
    });
    expect(server.connections).toHaveLength(0);
    expect(await post({ url: server.url, allowPrivate: true })).toEqual({ kind: 'delivered', status: 200 });
  });

  it('is unsent to a name that resolves to a loopback address, checked after DNS, and the receiver sees no connection', async () => {
    const server = await receiver((response) => response.writeHead(200).end());
    const url = `http://localhost:${server.port}/hook`;
    expect(await post({ url, allowPrivate: false })).toEqual({ kind: 'unsent', reason: 'localhost resolves to 127.0.0.1, which is not a public address' });
    expect(server.connections).toHaveLength(0);
    expect(await post({ url, allowPrivate: true })).toEqual({ kind: 'delivered', status: 200 });
  });
});
