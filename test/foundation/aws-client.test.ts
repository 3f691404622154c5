import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsClient, AwsError, retryPolicy, type AwsRequest } from '@hatchery/platform/aws/client';
import { signRequest, type Credentials, type SignableRequest } from '@hatchery/platform/aws/signature';
import { DynamoClient } from '@hatchery/platform/aws/dynamo';
import { ensureTable } from '@hatchery/core/dynamo/table';
import { connectionItem, connectionKeys, connectionStore, shardOf } from '@hatchery/core/realtime/connections';
import { hubConnections, ManagementClient } from '@hatchery/platform/aws/management';
import { startDynalite } from '@hatchery/local/dynamo';

/**
 * The service's own AWS client (core/aws): its signatures held to the AWS
 * SDK's signer, its errors, retries and sockets against dynalite (the local
 * stack's DynamoDB API) and small servers that answer as AWS does when it fails.
 */

const credentials: Credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session/token+with=chars' };
const region = 'eu-west-1';

/** The SDK's checksum interface over node:crypto: the SDK signer's own derivation and canonical request, on the same SHA-256. */
class Sha256 {
  private hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', typeof secret === 'string' ? secret : ArrayBuffer.isView(secret) ? new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength) : new Uint8Array(secret));
  }
  update(data: Uint8Array) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
  reset() {}
}

/** What the SDK's signer makes of the same request, headers and time (x-amz-content-sha256 left out, as only S3 needs it). */
async function sdkAuthorization(request: SignableRequest & { protocol?: string }, service: string, signingDate: Date, creds = credentials): Promise<string> {
  const [hostname, port] = request.host.split(':');
  const signer = new SignatureV4({ credentials: creds, region, service, sha256: Sha256, applyChecksum: false });
  const signed = await signer.sign(
    { method: request.method, protocol: request.protocol ?? 'https:', hostname: hostname!, port: port ? Number(port) : undefined, path: request.path, query: {}, headers: { ...request.headers, host: request.host }, body: request.body },
    { signingDate },
  );
  return signed.headers.authorization!;
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const readBody = async (request: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** An answer as AWS's JSON protocols give one: the type in x-amzn-errortype (REST) or the body's __type (DynamoDB). */
function awsError(response: ServerResponse, status: number, type: string, message: string, { header = false } = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...(header && { 'x-amzn-errortype': type }), 'x-amzn-requestid': 'request-1' });
  response.end(JSON.stringify(header ? { message } : { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
}

describe('SigV4 signatures', () => {
  const date = new Date('2026-03-14T15:09:26.535Z');
  const cases: Array<{ name: string; service: string; request: SignableRequest; creds?: Credentials }> = [
    {
      name: 'a DynamoDB UpdateItem',
      service: 'dynamodb',
      request: {
        method: 'POST',
        host: 'dynamodb.eu-west-1.amazonaws.com',
        path: '/',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.UpdateItem', 'content-length': '58' },
        body: '{"TableName":"hatchery","Key":{"pk":{"S":"ratelimit#ü"}}}',
      },
    },
    {
      name: 'a post to a connection whose id needs escaping, on a named stage',
      service: 'execute-api',
      request: {
        method: 'POST',
        host: 'abc123.execute-api.eu-west-1.amazonaws.com',
        path: '/prod/@connections/Ab%2Bc%2Fd%3D',
        headers: { 'content-type': 'application/octet-stream', 'content-length': '3' },
        body: new Uint8Array([0, 255, 30]),
      },
    },
    {
      name: 'a DELETE on the $default stage, without a session token',
      service: 'execute-api',
      request: { method: 'DELETE', host: 'abc123.execute-api.eu-west-1.amazonaws.com', path: '/$default/@connections/AbCdEfGhIjKlMnO%3D', headers: { 'content-length': '0' }, body: '' },
      creds: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
    },
    {
      name: 'a local endpoint with a port, headers with odd spacing and unsigned ones',
      service: 'dynamodb',
      request: {
        method: 'POST',
        host: '127.0.0.1:8000',
        path: '/a/./b/../c//d/',
        headers: { 'x-amz-target': '  DynamoDB_20120810.Query ', 'x-custom': 'a \t b', 'user-agent': 'hatchery', 'x-amzn-trace-id': 'Root=1-x', 'content-length': '2' },
        body: '{}',
      },
    },
  ];

  it.each(cases)('signs $name as the AWS SDK does', async ({ service, request, creds }) => {
    const headers = signRequest(request, { region, service }, creds ?? credentials, date);
    expect(headers.authorization).toBe(await sdkAuthorization(request, service, date, creds));
    expect(headers['x-amz-date']).toBe('20260314T150926Z');
    expect(headers['x-amz-security-token']).toBe(creds ? undefined : credentials.sessionToken);
  });

  it('sends what it signed: a server re-signing each request with the SDK’s signer gets the same signature', async () => {
    const seen: Array<{ method: string; path: string; verified: boolean }> = [];
    const server = createServer(async (request, response) => {
      const body = await readBody(request);
      const signedNames = /SignedHeaders=([^,]+)/.exec(request.headers.authorization ?? '')![1]!.split(';');
      const headers = Object.fromEntries(signedNames.map((name) => [name, String(request.headers[name])]));
      const signingDate = new Date(headers['x-amz-date']!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
      const expected = await sdkAuthorization({ method: request.method!, protocol: 'http:', host: headers.host!, path: request.url!, headers, body }, signedNames.includes('x-amz-target') ? 'dynamodb' : 'execute-api', signingDate);
      seen.push({ method: request.method!, path: request.url!, verified: expected === request.headers.authorization });
      if (request.url!.endsWith('/Gone%3D')) return awsError(response, 410, 'GoneException', 'Connection Gone= is gone.', { header: true });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(signedNames.includes('x-amz-target') ? '{}' : '');
    });
    const url = await listen(server);
    try {
      const management = new ManagementClient(`${url}/$default`, { region, credentials: () => credentials });
      await management.postToConnection('Ab+c/d=', new TextEncoder().encode('{"type":6}\u001e'));
      await management.deleteConnection("It's(*)!");
      const connections = hubConnections(management);
      expect(await connections.post('Gone=', 'x')).toBe('gone');
      await connections.close('Gone=');
      await new DynamoClient({ region, endpoint: url, credentials: () => credentials }).send('PutItem', { TableName: 't', Item: { pk: 'ü', sk: 'x y' } });
      expect(seen).toEqual([
        { method: 'POST', path: '/$default/@connections/Ab%2Bc%2Fd%3D', verified: true },
        { method: 'DELETE', path: '/$default/@connections/It%27s%28%2A%29%21', verified: true },
        { method: 'POST', path: '/$default/@connections/Gone%3D', verified: true },
        { method: 'DELETE', path: '/$default/@connections/Gone%3D', verified: true },
        { method: 'POST', path: '/', verified: true },
      ]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('names a GoneException as the SDK did, and answers it without a retry', async () => {
    let posts = 0;
    const server = createServer((request, response) => {
      posts++;
      request.resume();
      awsError(response, 410, 'GoneException', 'Connection is gone.', { header: true });
    });
    const url = await listen(server);
    try {
      const error = await new ManagementClient(url, { region, credentials: () => credentials }).postToConnection('x=', new Uint8Array(1)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AwsError);
      expect(error).toMatchObject({ name: 'GoneException', message: 'Connection is gone.', statusCode: 410, requestId: 'request-1' });
      expect(posts).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('against dynalite', () => {
  let dynalite: Awaited<ReturnType<typeof startDynalite>>;
  let admin: DynamoDBClient;
  let documents: DynamoDBDocumentClient;
  const local = () => ({ accessKeyId: 'local', secretAccessKey: 'local' });
  const table = 'aws-client-test';

  /**
   * dynalite behind a proxy that fails requests as DynamoDB does under load:
   * `plan` answers a request (by its operation) in place of dynalite, or lets it through.
   */
  async function faultyDynamo(plan: (operation: string, body: Record<string, unknown>, response: ServerResponse) => 'forward' | 'answered' | 'reset' | 'hang') {
    const calls: string[] = [];
    let connections = 0;
    const server = createServer(async (request, response) => {
      const body = await readBody(request);
      const operation = String(request.headers['x-amz-target']).split('.')[1]!;
      calls.push(operation);
      const action = plan(operation, JSON.parse(body.toString()) as Record<string, unknown>, response);
      if (action === 'reset') return request.socket.destroy();
      if (action !== 'forward') return;
      const upstream = httpRequest(`${dynalite.endpoint}/`, { method: 'POST', headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
      });
      upstream.end(body);
    });
    server.on('connection', () => connections++);
    const url = await listen(server);
    return {
      url,
      calls,
      connections: () => connections,
      client: () => new DynamoClient({ region, endpoint: url, credentials: local }),
      close: () => {
        server.closeAllConnections();
        server.close();
      },
    };
  }

  beforeAll(async () => {
    dynalite = await startDynalite();
    admin = new DynamoDBClient({ endpoint: dynalite.endpoint, region, credentials: local() });
    documents = DynamoDBDocumentClient.from(admin);
    await ensureTable(admin, table);
  });
  afterAll(async () => {
    admin?.destroy();
    await dynalite?.stop();
  });

  it('names its errors as DynamoDB does (error.name, as the code checks them) and does not retry them', async () => {
    const proxy = await faultyDynamo(() => 'forward');
    try {
      const client = proxy.client();
      await client.send('PutItem', { TableName: table, Item: { pk: 'named', sk: '1' } });
      const conditional = await client
        .send('PutItem', { TableName: table, Item: { pk: 'named', sk: '1' }, ConditionExpression: 'attribute_not_exists(pk)' })
        .catch((caught: unknown) => caught);
      expect(conditional).toBeInstanceOf(AwsError);
      expect(conditional).toMatchObject({ name: 'ConditionalCheckFailedException', statusCode: 400 });
      expect((conditional as Error).message).toMatch(/conditional request failed/i);
      const missing = await client.send('Query', { TableName: 'no-such-table', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'x' } }).catch((caught: unknown) => caught);
      expect(missing).toMatchObject({ name: 'ResourceNotFoundException', statusCode: 400 });
      expect((missing as Error).message).toMatch(/non-existent table|not found/i);
      expect(proxy.calls).toEqual(['PutItem', 'PutItem', 'Query']);
    } finally {
      proxy.close();
    }
  });

  it('retries throttling, 5xx answers and dropped sockets, up to 3 attempts in all', async () => {
    let failures: Array<'throttle' | '500' | 'reset'> = [];
    const proxy = await faultyDynamo((operation, _body, response) => {
      const failure = failures.shift();
      if (failure === 'throttle') awsError(response, 400, 'ProvisionedThroughputExceededException', 'The level of configured provisioned throughput for the table was exceeded.');
      else if (failure === '500') awsError(response, 500, 'InternalServerError', 'Internal server error');
      else if (failure === 'reset') return 'reset';
      return failure ? 'answered' : 'forward';
    });
    try {
      const client = proxy.client();
      const update = () =>
        client.send('UpdateItem', {
          TableName: table,
          Key: { pk: 'retried', sk: '1' },
          UpdateExpression: 'ADD #hits :one',
          ExpressionAttributeNames: { '#hits': 'hits' },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        });

      failures = ['throttle', 'reset'];
      expect(await update()).toEqual({ Attributes: { hits: 1 } });
      expect(proxy.calls.length).toBe(3);

      failures = ['500', '500', '500', '500'];
      const error = await update().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'InternalServerError', statusCode: 500 });
      expect(proxy.calls.length).toBe(3 + retryPolicy.attempts);
      // The 4th failure was never asked for; the counter was added to once.
      expect(failures).toEqual(['500']);
      expect((await documents.send(new GetCommand({ TableName: table, Key: { pk: 'retried', sk: '1' } }))).Item).toEqual({ pk: 'retried', sk: '1', hits: 1 });
    } finally {
      proxy.close();
    }
  });

  it('gives up on a request with no answer after each attempt’s timeout', async () => {
    const server = createServer(() => undefined);
    const url = await listen(server);
    try {
      const client = new AwsClient({ service: 'dynamodb', region, endpoint: url, credentials: local, attemptTimeoutMs: 150 });
      const started = performance.now();
      const error = await client.send({ method: 'POST', path: '/', body: '{}' }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'TimeoutError' });
      expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 150);
      client.destroy();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('keeps its sockets alive between requests, and no more open than its pool allows', async () => {
    const proxy = await faultyDynamo(() => 'forward');
    try {
      const client = new AwsClient({ service: 'dynamodb', region, endpoint: proxy.url, credentials: local, maxSockets: 3 });
      const list: AwsRequest = { method: 'POST', path: '/', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' }, body: '{}' };
      for (let i = 0; i < 10; i++) await client.send(list);
      expect(proxy.connections()).toBe(1);
      await Promise.all(Array.from({ length: 30 }, () => client.send(list)));
      expect(proxy.connections()).toBeLessThanOrEqual(3);
      client.destroy();
    } finally {
      proxy.close();
    }
  });

  it('writes and reads items as lib-dynamodb does', async () => {
    const client = new DynamoClient({ region, endpoint: dynalite.endpoint, credentials: local });
    const item = {
      pk: 'types',
      sk: 'ours',
      text: 'ü\u001e',
      integer: 42,
      fraction: -1.5,
      yes: true,
      nothing: null,
      list: ['a', 1, false, { nested: ['deep'] }],
      map: { a: { b: 2 } },
      strings: new Set(['x', 'y']),
      numbers: new Set([1, 2.5]),
    };
    await client.send('PutItem', { TableName: table, Item: item });
    expect((await documents.send(new GetCommand({ TableName: table, Key: { pk: 'types', sk: 'ours' } }))).Item).toEqual(item);
    await documents.send(new PutCommand({ TableName: table, Item: { ...item, sk: 'sdk' } }));
    expect((await client.send('GetItem', { TableName: table, Key: { pk: 'types', sk: 'sdk' }, ConsistentRead: true })).Item).toEqual({ ...item, sk: 'sdk' });
    expect(await client.send('GetItem', { TableName: table, Key: { pk: 'types', sk: 'none' } })).toEqual({});
  });

  it('pages a shard of more than one page, each page from where the last ended', async () => {
    const client = new DynamoClient({ region, endpoint: dynalite.endpoint, credentials: local });
    const paged = 'aws-client-paged';
    await ensureTable(admin, paged);
    const ids: string[] = [];
    for (let i = 0; ids.length < 1_050; i++) if (shardOf(`Paged${i}=`) === 0) ids.push(`Paged${i}=`);
    for (let start = 0; start < ids.length; start += 25) {
      const writes = ids.slice(start, start + 25).map((id) => ({ PutRequest: { Item: connectionItem(id, Date.now(), { awaitingHandshake: false }) } }));
      expect((await client.send('BatchWriteItem', { RequestItems: { [paged]: writes } })).UnprocessedItems).toEqual({});
    }
    const pages: string[][] = [];
    for await (const page of connectionStore({ client, table: paged }).shard(0)) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([1_000, 50]);
    expect(new Set(pages.flat())).toEqual(new Set(ids));
  });

  it('sends the unprocessed items of a batch write again until none is left', async () => {
    let batches = 0;
    const direct = new AwsClient({ service: 'dynamodb', region, endpoint: dynalite.endpoint, credentials: local });
    // DynamoDB shedding load: each batch write does its first request only and hands the rest back, as they came.
    const proxy = await faultyDynamo((operation, body, response) => {
      if (operation !== 'BatchWriteItem') return 'forward';
      batches++;
      const [name, requests] = Object.entries(body.RequestItems as Record<string, unknown[]>)[0]!;
      void direct
        .send({
          method: 'POST',
          path: '/',
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.BatchWriteItem' },
          body: JSON.stringify({ RequestItems: { [name]: requests.slice(0, 1) } }),
        })
        .then(() => {
          response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
          response.end(JSON.stringify({ UnprocessedItems: requests.length > 1 ? { [name]: requests.slice(1) } : {} }));
        });
      return 'answered';
    });
    try {
      const store = connectionStore({ client: proxy.client(), table });
      const id = 'Unprocessed1=';
      const addresses = Array.from({ length: 30 }, (_, i) => `0x${String(i).padStart(40, '0')}`);
      await store.add(id, Date.now());
      for (const address of addresses) expect(await store.subscribe(id, address)).toBe('subscribed');
      await store.remove(id);
      // 30 group items in batches of 25 and 5, each batch handing back all but one.
      expect(batches).toBe(30);
      for (const address of addresses) {
        expect((await documents.send(new GetCommand({ TableName: table, Key: { pk: connectionKeys.group(address), sk: id } }))).Item).toBeUndefined();
      }
    } finally {
      proxy.close();
      direct.destroy();
    }
  });
});
