import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { INITIAL_RETRY_TOKENS, Retry } from '@smithy/core/retry';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureTable } from '@hatchery/platform/aws/table';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { pacer } from '@hatchery/core/realtime/budget';
import { inOnePage, post } from '@hatchery/core/realtime/fan-out';
import { startDynalite } from '@hatchery/local/dynamo';
import { dynamoCallers, dynamoClient, dynamoSettings } from '@hatchery/platform/aws/dynamo';
import { hubConnections, managementApiClient, managementSettings } from '@hatchery/platform/aws/management';
import { certainlyUnapplied } from '@hatchery/platform/aws/retry';
import { slackMs, timed } from '../../support/pace';

/**
 * The SDK clients as the service configures them (platform/src/aws), against
 * real HTTP servers that fail on purpose as DynamoDB (JSON 1.0) and API
 * Gateway's management API (REST JSON) fail: the retry quota, DynamoDB's
 * attempts, Retry-After, throttling, clock skew, DNS errors, gone connections,
 * and posts that must not be applied twice when an answer is slow.
 */

// The SDK's default credential chain takes these first, as it does in Lambda; the clients read their region from the
// service's configuration, which needs a database URL (never connected to here).
process.env.AWS_ACCESS_KEY_ID = 'test';
process.env.AWS_SECRET_ACCESS_KEY = 'test';
process.env.DATABASE_URL ??= 'postgres://unused@127.0.0.1:1/unused';

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when it arrived. */
  at: number;
}

/** How the server treats one request: answers it (at once or later), or returns 'reset' to drop the connection under it. */
type Answer = (request: Received, response: ServerResponse) => unknown;

/** The SDK's error behind a post the management API refused, as the error `failure` reads. */
const refusedWith = (outcome: unknown) =>
  (typeof outcome === 'object' && outcome !== null && 'error' in outcome ? outcome.error : undefined) as
    | (Error & { code?: string; $metadata?: { attempts?: number } })
    | undefined;

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
  vi.restoreAllMocks();
});

async function misbehaving(answer: Answer): Promise<{ url: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const received = { method: request.method!, path: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString(), at: performance.now() };
    requests.push(received);
    if ((await answer(received, response)) === 'reset') request.socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push({
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** An error as DynamoDB's JSON 1.0 protocol answers it. */
function dynamoError(response: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type, 'x-amzn-requestid': 'test', ...headers });
  response.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
}

/** An error as the management API's REST JSON protocol answers it. */
function managementError(response: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type, 'x-amzn-requestid': 'test', ...headers });
  response.end(JSON.stringify({ message }));
}

function ok(response: ServerResponse, body = '{}'): void {
  response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
  response.end(body);
}

const put = (id: string) => new PutCommand({ TableName: 't', Item: { pk: id, sk: 'x' } });
/** The rate limiter's counter update: an ADD, which takes effect twice if sent twice. */
const addHit = () =>
  new UpdateCommand({
    TableName: 't',
    Key: { pk: 'p', sk: 's' },
    UpdateExpression: 'ADD #h :one',
    ExpressionAttributeNames: { '#h': 'hits' },
    ExpressionAttributeValues: { ':one': 1 },
  });
const gaps = (requests: Received[]) => requests.slice(1).map((request, i) => request.at - requests[i]!.at);
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error & { $metadata?: { attempts?: number }; code?: string },
  );

describe('DynamoDB', () => {
  it('keeps a retry quota: a brownout of 500s costs about 1.2 requests a call, not an attempt count', async () => {
    const server = await misbehaving((_, response) => dynamoError(response, 500, 'InternalServerError', 'Internal server error'));
    const client = dynamoClient({ endpoint: server.url });
    for (let call = 0; call < 200; call++) expect(await failure(client.send(put(`brownout${call}`)))).toMatchObject({ name: 'InternalServerError' });
    // Each retry spends Retry.cost() tokens of the INITIAL_RETRY_TOKENS; failures never earn any back.
    expect(server.requests.length).toBe(200 + Math.floor(INITIAL_RETRY_TOKENS / Retry.cost()));
    expect(server.requests.length / 200).toBeLessThan(1.25);
  });

  it('makes 4 attempts, the SDK’s for DynamoDB', async () => {
    let failures = 3;
    const server = await misbehaving((_, response) =>
      failures-- > 0 ? dynamoError(response, 503, 'ServiceUnavailable', 'Service unavailable') : ok(response),
    );
    const client = dynamoClient({ endpoint: server.url });
    await client.send(put('fourth'));
    expect(server.requests.length).toBe(4);
    expect(server.requests.map((request) => request.headers['amz-sdk-request'])).toEqual([1, 2, 3, 4].map((attempt) => `attempt=${attempt}; max=4`));

    failures = Infinity;
    expect(await failure(client.send(put('never')))).toMatchObject({ name: 'ServiceUnavailable', $metadata: { attempts: 4 } });
    expect(dynamoSettings.maxAttempts).toBe(4);
  });

  it('retries throttling after the longer, doubling throttling backoff', async () => {
    // The jitter fixed at a tenth: waits of 100, 200 and 400 ms on throttling's 1 s base (2.5, 5, 10 on the 25 ms one).
    vi.spyOn(Math, 'random').mockReturnValue(0.1);
    const throttles = ['ProvisionedThroughputExceededException', 'ThrottlingException', 'ProvisionedThroughputExceededException'];
    const server = await misbehaving((_, response) => {
      const type = throttles.shift();
      if (type) dynamoError(response, 400, type, 'Rate of requests exceeds the allowed throughput.');
      else ok(response, '{"Attributes":{"hits":{"N":"1"}}}');
    });
    const client = dynamoClient({ endpoint: server.url, caller: 'counter' });
    const update = addHit();
    expect((await client.send(update)).Attributes).toEqual({ hits: 1 });
    expect(server.requests.length).toBe(4);
    const waits = gaps(server.requests);
    expect(waits[0]).toBeGreaterThanOrEqual(95);
    expect(waits[1]).toBeGreaterThanOrEqual(195);
    expect(waits[2]).toBeGreaterThanOrEqual(395);
  });

  it('corrects its clock from a server whose clock is 15 minutes ahead, and signs right from then on', async () => {
    const skewMs = 15 * 60_000;
    const amzDate = (value: string) => Date.parse(value.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    const server = await misbehaving((request, response) => {
      const serverNow = Date.now() + skewMs;
      const date = { date: new Date(serverNow).toUTCString() };
      const signedAt = amzDate(String(request.headers['x-amz-date']));
      if (Math.abs(serverNow - signedAt) > 5 * 60_000) {
        dynamoError(
          response,
          400,
          'InvalidSignatureException',
          `Signature expired: ${request.headers['x-amz-date']} is now earlier than the server's time - 5 min.`,
          date,
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', ...date });
      response.end('{}');
    });
    const client = dynamoClient({ endpoint: server.url });
    await client.send(put('skewed'));
    expect(server.requests.length).toBe(2);
    await client.send(put('corrected'));
    expect(server.requests.length).toBe(3);
    expect(amzDate(String(server.requests[2]!.headers['x-amz-date'])) - Date.now()).toBeGreaterThan(skewMs - 60_000);
  });

  it('retries a name that does not resolve', async () => {
    const error = await failure(dynamoClient({ endpoint: 'http://dynamodb.hatchery-test.invalid' }).send(put('dns')));
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(error?.code);
    expect(error?.$metadata?.attempts).toBe(4);
  });

  it('ends a call, its retries included, within its caller’s deadline when DynamoDB stops answering', async () => {
    const server = await misbehaving(() => new Promise(() => undefined));
    const { value: error, ms, lagMs } = await timed(() => failure(dynamoClient({ endpoint: server.url }).send(put('hung'))));
    expect(error).toMatchObject({ name: 'TimeoutError' });
    // Each attempt ends on a timer, as late as the machine's lag makes it.
    expect(ms).toBeLessThan(dynamoCallers.records.deadlineMs + slackMs({ lagMs }));
    // Attempts of 500 ms each, retried while another fits in 2 s: three, or two when the lag left no room for a third.
    expect([2, 3]).toContain(server.requests.length);
  });

  it('does not re-send the rate limiter’s ADD when DynamoDB may have applied it', async () => {
    const server = await misbehaving(() => new Promise(() => undefined));
    const update = addHit();
    expect(await failure(dynamoClient({ endpoint: server.url, caller: 'counter' }).send(update))).toMatchObject({ name: 'TimeoutError' });
    expect(server.requests.length).toBe(1);
  });

  it('sends the Lambda invocation’s trace header', async () => {
    const server = await misbehaving((_, response) => ok(response));
    const traceHeader = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'hatchery-hub');
    vi.stubEnv('_X_AMZN_TRACE_ID', traceHeader);
    try {
      await dynamoClient({ endpoint: server.url }).send(put('traced'));
    } finally {
      vi.unstubAllEnvs();
    }
    expect(server.requests[0]!.headers['x-amzn-trace-id']).toBe(traceHeader);
  });
});

describe('the management API', () => {
  const frame = '{"type":1,"target":"marketChanged","arguments":[]}\u001e';
  const connectionId = (path: string) => decodeURIComponent(path.split('/').at(-1)!);

  it('honours Retry-After on a 429', async () => {
    let throttled = false;
    const server = await misbehaving((_, response) => {
      if (throttled) return ok(response);
      throttled = true;
      managementError(response, 429, 'LimitExceededException', 'Too many requests', { 'retry-after': '1' });
    });
    expect(await hubConnections(managementApiClient(`${server.url}/prod`)).post('Retried=', frame)).toBe('sent');
    expect(server.requests.length).toBe(2);
    expect(gaps(server.requests)[0]).toBeGreaterThanOrEqual(990);
  });

  it('retries a throttled post, and a signature refused for a skewed clock', async () => {
    const answers: Array<(response: ServerResponse) => void> = [
      (response) => managementError(response, 429, 'TooManyRequestsException', 'Too many requests'),
      (response) =>
        managementError(response, 403, 'InvalidSignatureException', 'Signature expired: 20200101T000000Z is now earlier than 20200101T001000Z.', {
          date: new Date(Date.now() + 15 * 60_000).toUTCString(),
        }),
    ];
    const server = await misbehaving((_, response) => (answers.shift() ?? ok)(response));
    expect(await hubConnections(managementApiClient(`${server.url}/prod`)).post('Refused=', frame)).toBe('sent');
    expect(server.requests.length).toBe(3);
  });

  it('leaves a throttled post to the pacer when the caller paces: one request each, then the pacer’s own retry after Retry-After', async () => {
    let refused = 0;
    const server = await misbehaving((request, response) => {
      if (connectionId(request.path) === 'Throttled=' && refused++ === 0)
        return managementError(response, 429, 'TooManyRequestsException', 'Too many requests', { 'retry-after': '1' });
      ok(response);
    });
    const paced = hubConnections(managementApiClient(`${server.url}/prod`, 4, { paced: true }));
    const outcome = await paced.post('Throttled=', frame);
    expect(outcome).toMatchObject({ refused: 'throttled', retryAfterMs: 1_000 });
    expect(refusedWith(outcome)?.name).toBe('TooManyRequestsException');
    expect(server.requests.length, 'the client did not retry it').toBe(1);

    const pace = pacer(1_000);
    const store = connectionStore({ table: 'unused' });
    const delivery = await post(inOnePage(['Throttled=', 'Other=']), frame, {
      connections: paced,
      store,
      concurrency: 1,
      log: pino({ level: 'silent' }),
      pace,
    });
    expect(delivery).toMatchObject({ sent: 2, failed: 0 });
    expect(pace.throttles).toBe(0);
    refused = 0;
    const again = await post(inOnePage(['Throttled=']), frame, { connections: paced, store, concurrency: 1, log: pino({ level: 'silent' }), pace });
    expect(again).toMatchObject({ sent: 1, failed: 0 });
    expect(pace.throttles, 'the pacer saw the 429 and retried the post itself').toBe(1);
    const [refusedAt, retriedAt] = server.requests.filter((request) => connectionId(request.path) === 'Throttled=').slice(-2);
    expect(retriedAt!.at - refusedAt!.at).toBeGreaterThanOrEqual(990);
  });

  it('knows the handler’s connection timeout, the one timeout that proves a post was never sent', async () => {
    const { setConnectionTimeout } = await import('../../../node_modules/@smithy/node-http-handler/dist-es/set-connection-timeout.js' as string);
    const request = Object.assign(new EventEmitter(), { destroy: () => undefined });
    const timedOut = new Promise<Error>((resolve) => setConnectionTimeout(request, resolve, 5));
    const error = await timedOut;
    expect(certainlyUnapplied({ error: error as never, errorType: 'TRANSIENT' })).toBe(true);
    const afterSending = Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ETIMEDOUT' });
    expect(certainlyUnapplied({ error: afterSending as never, errorType: 'TRANSIENT' })).toBe(false);
  });

  it('answers gone for a GoneException, without a retry, and the fan-out removes the connection', async () => {
    const dynalite = await startDynalite();
    try {
      const table = 'aws-clients-gone';
      const store = connectionStore({ client: dynamoClient({ endpoint: dynalite.endpoint }), table });
      await ensureTable(new DynamoDBClient({ endpoint: dynalite.endpoint, region: 'us-east-1' }), table);
      for (const id of ['Live=', 'Gone=']) {
        await store.add(id, Date.now());
        await store.join(id);
      }
      const server = await misbehaving((request, response) =>
        connectionId(request.path) === 'Gone=' ? managementError(response, 410, 'GoneException', 'Connection is gone.') : ok(response),
      );
      const connections = hubConnections(managementApiClient(`${server.url}/prod`));
      expect(await connections.post('Gone=', frame)).toBe('gone');
      await connections.close('Gone=');
      expect(server.requests.map((request) => [request.method, request.path])).toEqual([
        ['POST', '/prod/@connections/Gone%3D'],
        ['DELETE', '/prod/@connections/Gone%3D'],
      ]);

      const all = async () => {
        const ids: string[] = [];
        for await (const page of store.all()) ids.push(...page);
        return ids.sort();
      };
      expect(await all()).toEqual(['Gone=', 'Live=']);
      const delivery = await post(inOnePage(['Live=', 'Gone=']), frame, { connections, store, concurrency: 2, log: pino({ level: 'silent' }), pace: pacer(0) });
      expect(delivery).toMatchObject({ sent: 1, gone: 1, failed: 0 });
      expect(await all()).toEqual(['Live=']);
    } finally {
      await dynalite.stop();
    }
  });

  it('posts a frame once when API Gateway applies it but answers after the attempt’s timeout', async () => {
    const applied = new Map<string, number>();
    const server = await misbehaving(async (request, response) => {
      const id = connectionId(request.path);
      applied.set(id, (applied.get(id) ?? 0) + 1);
      // Every other connection answered late, past the request timeout; one connection reset after the post.
      if (id === 'Reset=') return 'reset';
      // Past a 3 s attempt timeout too: no attempt timer may send such a post again.
      if (Number(id.slice(4, -1)) % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 3_200));
      ok(response);
    });
    const ids = [...Array.from({ length: 20 }, (_, i) => `Slow${i}=`), 'Reset='];
    const log = pino({ level: 'silent' });
    const store = connectionStore({ table: 'unused' });
    const delivery = await post(inOnePage(ids), frame, {
      connections: hubConnections(managementApiClient(`${server.url}/prod`)),
      store,
      concurrency: 21,
      log,
      pace: pacer(0),
    });
    expect(delivery).toMatchObject({ sent: 10, failed: 11, gone: 0 });
    expect([...applied.values()].every((count) => count === 1)).toBe(true);
    expect(applied.size).toBe(21);
  });

  it('sends each post once when posts wait for a free socket behind a slow API', async () => {
    // 20 posts through 2 sockets, each answered after 400 ms: an attempt timer that ran while a post waited for a socket
    // would time out posts already applied and send them again.
    const applied = new Map<string, number>();
    const server = await misbehaving(async (request, response) => {
      const id = connectionId(request.path);
      applied.set(id, (applied.get(id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      ok(response);
    });
    const connections = hubConnections(managementApiClient(`${server.url}/prod`, 2));
    const ids = Array.from({ length: 20 }, (_, i) => `Queued${i}=`);
    const outcomes = await Promise.allSettled(ids.map((id) => connections.post(id, frame)));
    // Some fail (a post waiting for a socket past the connection timeout is retried, then runs out of time), none twice.
    expect(outcomes.length).toBe(20);
    expect(applied.size).toBeGreaterThan(0);
    expect([...applied.values()].every((count) => count === 1)).toBe(true);
    expect(server.requests.length).toBe(applied.size);
  });

  it('retries a name that does not resolve and a refused connection', async () => {
    const dns = await hubConnections(managementApiClient('http://execute-api.hatchery-test.invalid/prod')).post('Dns=', frame);
    expect(dns, 'never sent: the fan-out may try it again').toMatchObject({ refused: 'unsent' });
    const unresolved = refusedWith(dns);
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(unresolved?.code);
    expect(unresolved?.$metadata?.attempts).toBe(managementSettings.maxAttempts);

    const server = await misbehaving((_, response) => ok(response));
    servers.splice(0).forEach((closing) => closing.close());
    const closed = await hubConnections(managementApiClient(`${server.url}/prod`)).post('Refused=', frame);
    expect(closed).toMatchObject({ refused: 'unsent' });
    const refused = refusedWith(closed);
    expect(refused?.code).toBe('ECONNREFUSED');
    expect(refused?.$metadata?.attempts).toBe(managementSettings.maxAttempts);
  });
});

describe('against dynalite', () => {
  let dynalite: Awaited<ReturnType<typeof startDynalite>>;
  beforeAll(async () => {
    dynalite = await startDynalite();
  });
  afterAll(() => dynalite?.stop());

  it('writes and reads items as plain values', async () => {
    const client = dynamoClient({ endpoint: dynalite.endpoint });
    await ensureTable(new DynamoDBClient({ endpoint: dynalite.endpoint, region: 'us-east-1' }), 'aws-clients-items');
    const item = {
      pk: 'types',
      sk: 'all',
      text: 'ü\u001e',
      integer: 42,
      fraction: -1.5,
      yes: true,
      nothing: null,
      list: ['a', 1, { nested: ['deep'] }],
      strings: new Set(['x', 'y']),
    };
    await client.send(new PutCommand({ TableName: 'aws-clients-items', Item: item }));
    expect((await client.send(new GetCommand({ TableName: 'aws-clients-items', Key: { pk: 'types', sk: 'all' }, ConsistentRead: true }))).Item).toEqual(item);
  });
});
