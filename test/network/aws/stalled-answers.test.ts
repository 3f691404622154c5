import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamoCallers, dynamoClient } from '@hatchery/platform/aws/dynamo';
import { lambdaClient, lambdaSettings } from '@hatchery/platform/aws/lambda';
import { managementApiClient, managementSettings } from '@hatchery/platform/aws/management';
import { slackMs, timed } from '../../support/pace';

/**
 * The SDK clients as the service configures them keep their deadlines against a server that sends an answer's
 * headers (and for some, the start of its body) and then nothing: the handler's requestTimeout stops counting at the
 * headers, so without a bound on the body such a call would wait as long as the socket lived. The deadlines' own
 * relations are held in test/unit/aws/deadlines.test.ts.
 */
process.env.AWS_ACCESS_KEY_ID = 'test';
process.env.AWS_SECRET_ACCESS_KEY = 'test';
process.env.DATABASE_URL ??= 'postgres://unused@127.0.0.1:1/unused';

/** What the server sends before falling silent, the socket left open. */
type Stall = (response: ServerResponse) => void;

const servers: Array<() => void> = [];
afterEach(() => {
  for (const close of servers.splice(0)) close();
});

async function stallingServer(stall: Stall): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    request.resume();
    request.on('end', () => stall(response));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

const headersOnly =
  (contentType: string): Stall =>
  (response) => {
    response.writeHead(200, { 'content-type': contentType, 'content-length': '1000' });
    response.flushHeaders();
  };

const partOfTheBody =
  (contentType: string, start: string): Stall =>
  (response) => {
    response.writeHead(200, { 'content-type': contentType, 'content-length': '1000' });
    response.write(start);
  };

/** A body that never stalls long enough for an idle timer to notice: a byte every 100 ms, for ever. */
const trickle =
  (contentType: string): Stall =>
  (response) => {
    response.writeHead(200, { 'content-type': contentType, 'content-length': '100000' });
    const drip = setInterval(() => response.write(' '), 100);
    response.on('close', () => clearInterval(drip));
  };

/**
 * How the call ended, after how long, and the event loop's longest lag meanwhile (support/pace.ts). Waited for however
 * long it takes: the tests' timeout ends one that never ends.
 */
const ended = (call: Promise<unknown>) =>
  timed(() =>
    call.then(
      (value) => ({ resolved: value }),
      (error: unknown) => error,
    ),
  );

/** Four times the longest deadline here: the timeout only ends a call that hangs. */
const hungAfterMs = 4 * Math.max(dynamoCallers.records.deadlineMs, dynamoCallers.counter.deadlineMs, managementSettings.deadlineMs);

describe('a call whose answer stalls after its headers ends within its deadline, give or take the lag its timers met', { timeout: hungAfterMs }, () => {
  const dynamoJson = 'application/x-amz-json-1.0';

  it('DynamoDB, retried (hub records): every attempt ends at its request timeout, the last before the deadline', async () => {
    const server = await stallingServer(headersOnly(dynamoJson));
    const { deadlineMs } = dynamoCallers.records;
    const {
      ms,
      value: outcome,
      lagMs,
    } = await ended(dynamoClient({ endpoint: server.url }).send(new GetCommand({ TableName: 't', Key: { pk: 'p', sk: 's' } })));
    expect(outcome).toMatchObject({ name: 'TimeoutError' });
    expect(ms).toBeLessThan(deadlineMs + slackMs({ lagMs }));
    expect(server.requests()).toBeGreaterThan(1);
  });

  it('DynamoDB, at most once (the rate limiter’s ADD): one attempt, part of its body sent', async () => {
    const server = await stallingServer(partOfTheBody(dynamoJson, '{"Attributes":{"hits":'));
    const { deadlineMs } = dynamoCallers.counter;
    const update = new UpdateCommand({
      TableName: 't',
      Key: { pk: 'p', sk: 's' },
      UpdateExpression: 'ADD #h :one',
      ExpressionAttributeNames: { '#h': 'hits' },
      ExpressionAttributeValues: { ':one': 1 },
    });
    const { ms, value: outcome, lagMs } = await ended(dynamoClient({ endpoint: server.url, caller: 'counter' }).send(update));
    expect(outcome).toMatchObject({ name: 'TimeoutError' });
    expect(ms).toBeLessThan(deadlineMs + slackMs({ lagMs }));
    expect(server.requests()).toBe(1);
  });

  it('the management API: a post, sent once', async () => {
    const server = await stallingServer(headersOnly('application/json'));
    const client = managementApiClient(`${server.url}/prod`);
    const post = client.send(new PostToConnectionCommand({ ConnectionId: 'Stalled=', Data: new TextEncoder().encode('{}') }));
    const { ms, value: outcome, lagMs } = await ended(post);
    expect(outcome).toMatchObject({ name: 'TimeoutError' });
    expect(ms).toBeLessThan(managementSettings.deadlineMs + slackMs({ lagMs }));
    expect(server.requests()).toBe(1);
  });

  it('Lambda: the listener’s invoke of a shard, sent once', async () => {
    const server = await stallingServer(partOfTheBody('application/json', '{"sent":'));
    const invocationTimeoutMs = 200;
    const deadlineMs = invocationTimeoutMs + lambdaSettings.answerMarginMs + lambdaSettings.retryMarginMs;
    const invoke = lambdaClient({ endpoint: server.url, invocationTimeoutMs }).send(
      new InvokeCommand({ FunctionName: 'fanout', Payload: new TextEncoder().encode('{}') }),
    );
    const { ms, value: outcome, lagMs } = await ended(invoke);
    expect(outcome).toMatchObject({ name: 'TimeoutError' });
    expect(ms).toBeLessThan(deadlineMs + slackMs({ lagMs }));
    expect(server.requests()).toBe(1);
  });

  it('the management API: a post whose body trickles in, a byte at a time, ends at the attempt’s request timeout all the same', async () => {
    const server = await stallingServer(trickle('application/json'));
    const client = managementApiClient(`${server.url}/prod`);
    const post = client.send(new PostToConnectionCommand({ ConnectionId: 'Trickled=', Data: new TextEncoder().encode('{}') }));
    const { ms, value: outcome, lagMs } = await ended(post);
    expect(outcome).toMatchObject({ name: 'TimeoutError' });
    expect(ms).toBeLessThan(managementSettings.deadlineMs + slackMs({ lagMs }));
    expect(server.requests()).toBe(1);
  });
});
