import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes } from '@hatchery/functions/routes';
import { toEventV2 } from '@hatchery/local/gateway/http';
import { call, client, freshCaller } from '../accounts/support';
import { roomInTheMinute, slowestOf } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { requestBodyBytes } from '@hatchery/functions/middleware/body-size';

/** Headers and limits every endpoint shares, through the local gateway; the wallet POST limit is set to 2 here to see the setting work. */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { WALLET_POSTS_PER_MINUTE: '2' } });
});
afterAll(() => stack?.stop());

const address = `0x${'cd'.repeat(20)}`;

/** A link-wallet body that passes validation (the signature then fails recovery: 422 or 410, never 413/415). */
const linkBody = JSON.stringify({ address, signature: `0x${'11'.repeat(65)}` });

describe('X-Content-Type-Options: nosniff on every response', () => {
  it('on successes, problems, HTML, preflight, the gateway’s own answers and a refused WebSocket upgrade', async () => {
    const token = await stack.idp.signToken(freshCaller('nosniff'));
    const responses: Array<[string, Response]> = [
      ['GET /editions (200)', await stack.get('/editions')],
      ['GET /openapi.json (200)', await stack.get('/openapi.json')],
      ['GET /docs (HTML)', await stack.get('/docs')],
      ['GET /accounts/me (200)', await stack.get('/accounts/me', { headers: { authorization: `Bearer ${token}` } })],
      ['POST negotiate (200)', await stack.get('/hubs/events/negotiate?negotiateVersion=1', { method: 'POST' })],
      [
        'OPTIONS preflight (204)',
        await stack.get('/editions', { method: 'OPTIONS', headers: { origin: 'https://nowhere.example', 'access-control-request-method': 'GET' } }),
      ],
      ['GET /accounts/me (401)', await stack.get('/accounts/me')],
      ['GET /editions?page=0 (422)', await stack.get('/editions?page=0')],
      ['GET /no/such/path (404 from the route table)', await stack.get('/no/such/path')],
      ['GET / (404 from the gateway)', await stack.get('/')],
      ['GET /hubs/events without an upgrade (404)', await stack.get('/hubs/events')],
    ];
    for (const [name, response] of responses) expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');

    const refused = await upgrade('/hubs/other');
    expect(refused).toMatch(/^HTTP\/1\.1 404/);
    expect(refused).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
  });
});

describe('Cache-Control: no-store on problem responses', () => {
  it('on every kind of problem, whoever answers it', async () => {
    const token = await stack.idp.signToken(freshCaller('no-store'));
    const problems: Array<[string, Response]> = [
      ['401', await stack.get('/accounts/me')],
      ['404 from the route table', await stack.get('/no/such/path')],
      ['404 from the gateway', await stack.get('/')],
      ['422', await stack.get(`/accounts/not-an-address/nfts`)],
      [
        '413',
        await stack.get('/accounts/me/wallet', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: 'x'.repeat(requestBodyBytes + 1),
        }),
      ],
    ];
    for (const [name, response] of problems) {
      expect(response.headers.get('content-type'), name).toBe('application/problem+json');
      expect(response.headers.get('cache-control'), name).toBe('no-store');
    }
  });
});

describe('request bodies', () => {
  it(`413 for a body above ${requestBodyBytes} bytes, on any route, before anything else is looked at; the limit itself is accepted`, async () => {
    const api = await client(stack, freshCaller('big-body'));
    const padded = (bytes: number) => {
      const base = JSON.parse(linkBody) as Record<string, string>;
      const json = JSON.stringify({ ...base, padding: '' });
      return JSON.stringify({ ...base, padding: 'p'.repeat(bytes - Buffer.byteLength(json)) });
    };
    const atLimit = padded(requestBodyBytes);
    expect(Buffer.byteLength(atLimit)).toBe(requestBodyBytes);
    const accepted = await call(stack, 'POST', '/accounts/me/wallet', { token: api.token, rawBody: atLimit });
    expect(accepted.status).toBe(410);

    const tooLarge = await call(stack, 'POST', '/accounts/me/wallet', { token: api.token, rawBody: padded(requestBodyBytes + 1) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.problem).toMatchObject({ status: 413, title: 'Content too large', instance: '/accounts/me/wallet' });
    // Multi-byte characters count as the bytes they are.
    const wide = await call(stack, 'POST', '/accounts/me/wallet', {
      token: api.token,
      rawBody: JSON.stringify({ padding: 'é'.repeat(requestBodyBytes / 2) }),
    });
    expect(wide.status).toBe(413);
    // Without a token too, and on a route that takes no body.
    expect((await call(stack, 'POST', '/accounts/me/wallet', { rawBody: padded(requestBodyBytes + 1) })).status).toBe(413);
    expect((await call(stack, 'POST', '/hubs/events/negotiate', { rawBody: 'x'.repeat(requestBodyBytes + 1) })).status).toBe(413);
  });

  it('415 for a body that is not declared JSON on the route that takes JSON; JSON with a charset, or a +json type, is accepted', async () => {
    const api = await client(stack, freshCaller('media-type'));
    for (const contentType of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'application/json-seq',
      null,
    ]) {
      const reply = await call(stack, 'POST', '/accounts/me/wallet', { token: api.token, rawBody: linkBody, contentType });
      expect(reply.status, String(contentType)).toBe(415);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      expect(reply.problem).toMatchObject({ status: 415, title: 'Unsupported media type', instance: '/accounts/me/wallet' });
    }
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json']) {
      // A caller each: this file allows two wallet POSTs a minute.
      const { token } = await client(stack, freshCaller('media-type-json'));
      const reply = await call(stack, 'POST', '/accounts/me/wallet', { token, rawBody: linkBody, contentType });
      expect(reply.status, contentType).toBe(410);
    }
  });
});

describe('the wallet POSTs’ per-account limit is the WALLET_POSTS_PER_MINUTE setting', () => {
  it('with the setting at 2, the third wallet POST within the minute is 429', async () => {
    const api = await client(stack, freshCaller('setting'));
    await roomInTheMinute(3, await slowestOf(() => api.me(), 3));
    expect((await api.nonce()).status).toBe(200);
    expect((await api.nonce()).status).toBe(200);
    const third = await api.nonce();
    expect(third.status).toBe(429);
    expect(third.problem.detail).toMatch(/At most 2 /);
  }, 120_000);
});

describe('repeated request headers reach the handler as API Gateway’s payload 2.0 gives them', () => {
  it('joined with a bare comma, for every header (Node itself keeps only the first of some)', async () => {
    const route = httpRoutes.listEditions;
    const server = createServer((request: IncomingMessage, response) => {
      const event = toEventV2(
        request,
        new URL(request.url ?? '/', 'http://localhost'),
        { route, routeKey: `${route.method} ${route.path}`, pathParameters: undefined },
        undefined,
      );
      response.end(JSON.stringify(event.headers));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const raw = await rawRequest(port, [
        'GET /editions HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: Bearer one',
        'Authorization: Bearer two',
        'Content-Type: application/json',
        'Content-Type: text/plain',
        'User-Agent: first',
        'User-Agent: second',
        'X-Custom: a',
        'X-Custom: b',
        'Accept: text/html',
        'Accept: application/json',
        'Connection: close',
      ]);
      const headers = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, string>;
      expect(headers).toMatchObject({
        authorization: 'Bearer one,Bearer two',
        'content-type': 'application/json,text/plain',
        'user-agent': 'first,second',
        'x-custom': 'a,b',
        accept: 'text/html,application/json',
        host: '127.0.0.1',
      });
    } finally {
      server.close();
    }
  });
});

/** Sends header lines exactly as given and reads the whole answer. */
function rawRequest(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** A WebSocket upgrade request to `path` on the stack; resolves with the raw answer. */
function upgrade(path: string): Promise<string> {
  const { port } = new URL(stack.url);
  return rawRequest(Number(port), [
    `GET ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Sec-WebSocket-Version: 13',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
  ]);
}
