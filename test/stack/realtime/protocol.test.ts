import { once } from 'node:events';
import { connect } from 'node:net';
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GetConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { connectionStore, shardOf } from '@hatchery/core/realtime/connections';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { deliverShard, type FanOutParts } from '@hatchery/core/realtime/fan-out';
import { pacer } from '@hatchery/core/realtime/budget';
import { deliveryLedger } from '@hatchery/core/realtime/ledger';
import { hubConnections, managementApiClient } from '@hatchery/platform/aws/management';
import { hubErrors } from '@hatchery/core/realtime/hub';
import { messages, splitRecords } from '@hatchery/platform/signalr/protocol';
import { startTestStack, type TestStack } from '../../support/stack';
import { indexer, waitFor, wallet } from './support';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

/** The wire, byte for byte, with a plain WebSocket client. */
const RS = '\u001e';
let stack: TestStack;
let writes: ReturnType<typeof indexer>;
let management: ApiGatewayManagementApiClient;
const store = connectionStore();
const sockets: WebSocket[] = [];

beforeAll(async () => {
  stack = await startTestStack({ env: { CORS_ORIGINS: 'https://app.example.com' } });
  writes = indexer(stack);
  await createIndexerSchema(writes.pool);
  management = new ApiGatewayManagementApiClient({ endpoint: stack.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  for (const socket of sockets) socket.terminate();
  management?.destroy();
  await writes?.end();
  await stack?.stop();
});

interface Raw {
  socket: WebSocket;
  id: string;
  inbox: string[];
  closed: Promise<number>;
  send(text: string): void;
  /** The next message not yet taken. */
  next(): Promise<string>;
}

async function raw(options: { handshake?: boolean; headers?: Record<string, string> } = {}): Promise<Raw> {
  const before = new Set(stack.hub.connections.keys());
  const socket = new WebSocket(`${stack.url.replace('http', 'ws')}/hubs/events`, { headers: options.headers });
  sockets.push(socket);
  const inbox: string[] = [];
  let taken = 0;
  socket.on('message', (data) => inbox.push(data.toString()));
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  await once(socket, 'open');
  const id = [...stack.hub.connections.keys()].find((key) => !before.has(key))!;
  const client: Raw = {
    socket,
    id,
    inbox,
    closed,
    send: (text) => socket.send(text),
    next: async () => {
      await waitFor(() => inbox.length > taken, 'a message from the hub');
      return inbox[taken++]!;
    },
  };
  if (options.handshake !== false) {
    client.send(`{"protocol":"json","version":1}${RS}`);
    expect(await client.next()).toBe(`{}${RS}`);
  }
  return client;
}

/** An upgrade the gateway refuses: its HTTP status and body. */
function refusal(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${stack.url.replace('http', 'ws')}${path}`, { headers });
    socket.on('open', () => reject(new Error('the upgrade was accepted')));
    socket.on('error', () => undefined);
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
  });
}

describe('the handshake', () => {
  it('answers {} to json version 1, then a ping with a ping', async () => {
    const client = await raw();
    client.send(`{"type":6}${RS}`);
    expect(await client.next()).toBe(`{"type":6}${RS}`);
  });

  it('answers pings and completions in place, as $default’s return value; only the handshake’s answer is a management API post', async () => {
    const send = vi.spyOn(ApiGatewayManagementApiClient.prototype, 'send');
    try {
      const postsTo = (id: string) =>
        send.mock.calls.filter(([command]) => command instanceof PostToConnectionCommand && command.input.ConnectionId === id).length;
      const client = await raw();
      expect(postsTo(client.id)).toBe(1);
      client.send(`{"type":6}${RS}`);
      expect(await client.next()).toBe(`{"type":6}${RS}`);
      client.send(`{"type":1,"invocationId":"7","target":"Subscribe","arguments":["${wallet(61)}"]}${RS}{"type":6}${RS}`);
      expect(await client.next()).toBe(`{"type":3,"invocationId":"7","result":0}${RS}{"type":6}${RS}`);
      expect(postsTo(client.id)).toBe(1);
    } finally {
      send.mockRestore();
    }
  });

  it('sends no event before the handshake is answered (a SignalR client fails on any other first message), and events after it', async () => {
    const client = await raw({ handshake: false });
    const shard = shardOf(client.id);
    const parts: FanOutParts = {
      store,
      connections: hubConnections(managementApiClient(stack.url)),
      concurrency: 4,
      log: pino({ level: 'silent' }),
      pace: pacer(0),
    };
    const ledger = deliveryLedger();
    const early = marketChangedMessage({ count: 1, maxBlock: '101', version: 1 });
    await deliverShard({ event: 'early', shard, frame: early }, parts, ledger);
    client.send(`{"protocol":"json","version":1}${RS}`);
    expect(await client.next()).toBe(`{}${RS}`);

    await waitFor(async () => (await store.peek(shard, 10_000)).ids.includes(client.id), 'the handshaken connection in its shard');
    const late = marketChangedMessage({ count: 2, maxBlock: '102', version: 1 });
    await deliverShard({ event: 'late', shard, frame: late }, parts, ledger);
    expect(await client.next()).toBe(late);
    expect(client.inbox).not.toContain(early);
  });

  it('answers an error and closes for another protocol or version', async () => {
    for (const [request, error] of [
      ['{"protocol":"messagepack","version":1}', "The protocol 'messagepack' is not supported."],
      ['{"protocol":"json","version":2}', "The server does not support version 2 of the 'json' protocol."],
    ] as const) {
      const client = await raw({ handshake: false });
      client.send(`${request}${RS}`);
      expect(JSON.parse((await client.next()).slice(0, -1))).toEqual({ error });
      await client.closed;
    }
  });
});

describe('messages', () => {
  it.each([
    ['not JSON', `{nope${RS}`],
    ['a record without its separator', '{"type":6}'],
    ['a record without a numeric type', `{"type":"1","target":"Subscribe","arguments":[]}${RS}`],
    ['an invocation without a target', `{"type":1,"invocationId":"1","arguments":[]}${RS}`],
    ['a JSON array', `[1,2]${RS}`],
  ])('closes the connection with an error on %s, and forgets it', async (_name, frame) => {
    const client = await raw();
    client.send(frame);
    const close = JSON.parse((await client.next()).slice(0, -1)) as { type: number; error: string; allowReconnect: boolean };
    expect(close).toEqual({ type: 7, error: expect.stringMatching(/^Connection closed with an error: .+\.$/), allowReconnect: false });
    expect(close.error).not.toMatch(/at .*\.ts|Error:|SELECT/);
    await client.closed;
    await waitFor(async () => !(await ids(store.all())).includes(client.id), 'the connection item to go');
  });

  it('answers completions for invocations with an id, with the result or the reason for a failed one', async () => {
    const client = await raw();
    const invoke = async (id: string, target: string, args: unknown[]) => {
      client.send(`${JSON.stringify({ type: 1, invocationId: id, target, arguments: args })}${RS}`);
      return JSON.parse((await client.next()).slice(0, -1)) as Record<string, unknown>;
    };
    // Subscribe's result is the wallet's last forgeFulfilled sequence; Unsubscribe answers none.
    expect(await invoke('1', 'Subscribe', [wallet(30)])).toEqual({ type: 3, invocationId: '1', result: 0 });
    expect(await invoke('2', 'Subscribe', ['0xnope'])).toEqual({ type: 3, invocationId: '2', error: 'Invalid address.' });
    expect(await invoke('3', 'Unsubscribe', [12])).toEqual({ type: 3, invocationId: '3', error: 'Invalid address.' });
    expect(await invoke('4', 'Subscribe', [wallet(30), wallet(31)])).toEqual({
      type: 3,
      invocationId: '4',
      error: "Failed to invoke 'Subscribe': it takes exactly 1 argument, 2 given.",
    });
    expect(await invoke('5', 'SendMessage', ['hi'])).toEqual({ type: 3, invocationId: '5', error: "Unknown hub method 'SendMessage'." });
    expect(await invoke('6', 'constructor', [wallet(30)])).toEqual({ type: 3, invocationId: '6', error: "Unknown hub method 'constructor'." });
    expect(await invoke('7', 'Unsubscribe', [wallet(30)])).toEqual({ type: 3, invocationId: '7' });
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('runs an invocation without an id and answers nothing, not even for a bad address', async () => {
    const client = await raw();
    client.send(`{"type":1,"target":"Subscribe","arguments":["bad"]}${RS}{"type":1,"target":"Subscribe","arguments":["${wallet(32)}"]}${RS}{"type":6}${RS}`);
    // Several records in one message are answered in one message, here only the ping.
    expect(await client.next()).toBe(`{"type":6}${RS}`);
    expect(await ids(store.group(wallet(32)))).toEqual([client.id]);
    const fulfilment = await writes.fulfilFor(wallet(32));
    const event = JSON.parse((await client.next()).slice(0, -1));
    expect(event).toEqual({ type: 1, target: 'forgeFulfilled', arguments: [fulfilment] });
  });

  it('ignores messages a server has nothing to do for, and closes when the client sends close', async () => {
    const client = await raw();
    client.send(`{"type":3,"invocationId":"1"}${RS}{"type":5,"invocationId":"1"}${RS}{"type":99}${RS}{"type":6}${RS}`);
    expect(await client.next()).toBe(`{"type":6}${RS}`);
    client.send(`{"type":7}${RS}`);
    await client.closed;
  });
});

describe('large messages', () => {
  /** An invocation that fails at once (no argument, so no DynamoDB call) and whose completion is larger than itself. */
  const invocation = (id: string) => `${JSON.stringify({ type: 1, invocationId: id, target: 'Subscribe', arguments: [] })}${RS}`;
  const completion = (id: string) => messages.completion(id, hubErrors.arguments('Subscribe', 0));
  const bytes = (text: string) => Buffer.byteLength(text);

  /** Every completion the client receives, in arrival order, and the number of WebSocket messages they came in. */
  async function completions(client: Raw, expected: number): Promise<{ ids: string[]; messageCount: number }> {
    const ids: string[] = [];
    let messageCount = 0;
    while (ids.length < expected) {
      const message = await client.next();
      const found = splitRecords(message)!.map((record) => JSON.parse(record) as { type: number; invocationId?: string; error?: string });
      const replies = found.filter((record) => record.type === 3);
      if (replies.length) messageCount++;
      for (const reply of replies) {
        expect(reply.error).toBe(hubErrors.arguments('Subscribe', 0));
        ids.push(reply.invocationId!);
      }
    }
    return { ids, messageCount };
  }

  it('answers every one of ~1,900 invocations in a legal 127 KB message, in order, though the replies exceed one post', async () => {
    const ids: string[] = [];
    let message = '';
    while (bytes(message + invocation(String(ids.length))) <= 127 * 1024) message += invocation(String(ids.push(String(ids.length)) - 1));
    expect(ids.length).toBeGreaterThan(1_800);
    expect(ids.map(completion).join('').length).toBeGreaterThan(webSocketApiQuotas.managementPayloadBytes);
    const client = await raw();
    client.send(message);
    const received = await completions(client, ids.length);
    expect(received.ids).toEqual(ids);
    expect(received.messageCount).toBeGreaterThan(1);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
  });

  it.each([
    ['exactly the post limit arrive in one message', 0, 1],
    ['one byte past the post limit arrive in two', 1, 2],
  ])('replies of %s', async (_name, extra, messageCount) => {
    const target = webSocketApiQuotas.managementPayloadBytes + extra;
    const ids = Array.from({ length: 999 }, (_, i) => String(i).padStart(4, '0'));
    const sum = ids.reduce((total, id) => total + bytes(completion(id)), 0);
    // The last id is padded so that the replies add up to the target exactly.
    ids.push('x'.repeat(target - sum - bytes(completion(''))));
    expect(ids.reduce((total, id) => total + bytes(completion(id)), 0)).toBe(target);
    const message = ids.map(invocation).join('');
    expect(bytes(message)).toBeLessThanOrEqual(webSocketApiQuotas.messageBytes);
    const client = await raw();
    client.send(message);
    expect(await completions(client, ids.length)).toEqual({ ids, messageCount });
  });

  it('accepts a message of exactly the message limit and closes the connection (1009) one byte past it', async () => {
    const fill = (size: number) => {
      const head = invocation('1');
      // A ping padded with spaces inside its JSON, after the invocation: still one valid record each.
      return `${head}{"type":6${' '.repeat(size - bytes(head) - bytes(`{"type":6}${RS}`))}}${RS}`;
    };
    const atLimit = await raw();
    atLimit.send(fill(webSocketApiQuotas.messageBytes));
    expect(bytes(fill(webSocketApiQuotas.messageBytes))).toBe(webSocketApiQuotas.messageBytes);
    expect(await atLimit.next()).toBe(`${completion('1')}${messages.ping()}`);

    const past = await raw();
    past.send(fill(webSocketApiQuotas.messageBytes + 1));
    expect(await past.closed).toBe(1009);
  });
});

describe('negotiate from a browser page', () => {
  it('passes CORS preflight with the SignalR client’s headers, for an allowed origin only', async () => {
    const preflight = (origin: string) =>
      stack.get('/hubs/events/negotiate?negotiateVersion=1', {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-requested-with,x-signalr-user-agent' },
      });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-headers')?.split(',')).toEqual(expect.arrayContaining(['x-requested-with', 'x-signalr-user-agent']));
    expect((await preflight('https://evil.example.net')).headers.get('access-control-allow-origin')).toBeNull();
    const negotiated = await stack.get('/hubs/events/negotiate?negotiateVersion=1', { method: 'POST', headers: { Origin: 'https://app.example.com' } });
    expect(negotiated.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });

  it('refuses negotiate from an origin the CORS settings do not allow with 403, by the WebSocket’s own rule', async () => {
    const negotiate = (headers: Record<string, string>) => stack.get('/hubs/events/negotiate?negotiateVersion=1', { method: 'POST', headers });
    for (const origin of ['https://evil.example.net', 'https://app.example.com.evil.net', 'null']) {
      const refused = await negotiate({ Origin: origin });
      expect(refused.status, origin).toBe(403);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(await refused.json()).toMatchObject({ status: 403, title: 'Forbidden', instance: '/hubs/events/negotiate' });
      // The same origin on the WebSocket: the same answer.
      expect((await refusal('/hubs/events', { Origin: origin })).status).toBe(403);
    }
    expect((await negotiate({ Origin: 'https://app.example.com' })).status).toBe(200);
    expect((await negotiate({ Origin: stack.url })).status).toBe(200);
    expect((await negotiate({})).status).toBe(200);
  });
});

describe('$connect', () => {
  it('refuses a connection id that negotiate did not issue, with problem+json', async () => {
    const refused = await refusal('/hubs/events?id=not-a-token!');
    expect(refused.status).toBe(422);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 422, errors: { id: [expect.any(String)] } });
  });

  it('accepts the token negotiate issued', async () => {
    const { connectionToken } = (await (await stack.get('/hubs/events/negotiate?negotiateVersion=1', { method: 'POST' })).json()) as {
      connectionToken: string;
    };
    const socket = new WebSocket(`${stack.url.replace('http', 'ws')}/hubs/events?id=${connectionToken}`);
    sockets.push(socket);
    await once(socket, 'open');
  });

  it('refuses a browser page from an origin the CORS settings do not allow, and accepts allowed and same origins', async () => {
    const blocked = await refusal('/hubs/events', { Origin: 'https://evil.example.net' });
    expect(blocked.status).toBe(403);
    expect(JSON.parse(blocked.body)).toMatchObject({ status: 403, title: 'Forbidden' });
    await raw({ headers: { Origin: 'https://app.example.com' } });
    await raw({ headers: { Origin: stack.url } });
  });

  it('delivers $disconnect for every upgrade abandoned while $connect ran, half-closed or reset, so no connection record stays', async () => {
    const before = new Set(await ids(store.all()));
    const { port } = new URL(stack.url);
    const request = [
      `GET /hubs/events HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      '',
      '',
    ].join('\r\n');
    const abandoned = Array.from(
      { length: 100 },
      (_, i) =>
        new Promise<void>((resolve) => {
          const socket = connect(Number(port), '127.0.0.1', () => {
            socket.write(request);
            // Half of them end their side at once and wait for the gateway, which answers only once $connect has run;
            // the other half reset the connection.
            if (i % 2 === 0) socket.end();
            else setTimeout(() => socket.destroy(), 1);
          });
          socket.on('error', () => undefined);
          socket.on('close', () => resolve());
          socket.resume();
        }),
    );
    await Promise.all(abandoned);
    const left = async () => (await ids(store.all())).filter((id) => !before.has(id));
    await waitFor(async () => (await left()).length === 0, 'the connection records of abandoned upgrades to go', 40_000).catch(() => undefined);
    expect(await left()).toEqual([]);
  }, 60_000);

  it('has no WebSocket endpoint on other paths', async () => {
    expect((await refusal('/hubs/other')).status).toBe(404);
  });

  it('passes API Gateway’s event shape to the handlers', async () => {
    const client = await raw();
    const connection = stack.hub.connections.get(client.id)!;
    expect(client.id).toMatch(/^[A-Za-z0-9+/]{15}=$/);
    expect(connection.sourceIp).toBe('127.0.0.1');
  });
});

describe('the management API through the AWS SDK', () => {
  it('POST sends to the connection, GET describes it, DELETE closes it', async () => {
    const client = await raw();
    await management.send(new PostToConnectionCommand({ ConnectionId: client.id, Data: new TextEncoder().encode(`{"type":6}${RS}`) }));
    expect(await client.next()).toBe(`{"type":6}${RS}`);

    const described = await management.send(new GetConnectionCommand({ ConnectionId: client.id }));
    expect(described.ConnectedAt).toBeInstanceOf(Date);
    expect(described.LastActiveAt!.getTime()).toBeGreaterThanOrEqual(described.ConnectedAt!.getTime());
    expect(described.Identity?.SourceIp).toBe('127.0.0.1');

    await management.send(new DeleteConnectionCommand({ ConnectionId: client.id }));
    await client.closed;
    await waitFor(async () => !(await ids(store.all())).includes(client.id), 'the $disconnect handler');
  });

  it('answers GoneException (410) for an unknown connection', async () => {
    for (const command of [
      new PostToConnectionCommand({ ConnectionId: 'NoSuchConnectn=', Data: new TextEncoder().encode('x') }),
      new GetConnectionCommand({ ConnectionId: 'NoSuchConnectn=' }),
      new DeleteConnectionCommand({ ConnectionId: 'NoSuchConnectn=' }),
    ]) {
      const error = await management.send(command as never).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(GoneException);
      expect((error as GoneException).$metadata.httpStatusCode).toBe(410);
    }
  });
});

async function ids(pages: AsyncIterable<string[]>): Promise<string[]> {
  const all: string[] = [];
  for await (const page of pages) all.push(...page);
  return all;
}
