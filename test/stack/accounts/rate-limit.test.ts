import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roomInTheMinute, slowestOf } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { client, freshCaller } from './support';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const minute = 60_000;

describe('per-account limit on the two wallet POSTs', () => {
  it('the 6th wallet POST within a minute is 429 with Retry-After; another account and the other endpoints are unaffected', async () => {
    const limited = await client(stack, freshCaller('limited'));
    const bystander = await client(stack, freshCaller('bystander'));
    const wallet = privateKeyToAccount(generatePrivateKey());
    // The counter is a fixed one-minute window: the burst starts with room to finish inside one.
    await roomInTheMinute(15, await slowestOf(() => limited.me(), 3));

    // Both POSTs share the one counter: 3 nonce requests, 1 failed link, 1 successful link.
    const challenge = (await limited.nonce()).body;
    expect((await limited.nonce()).status).toBe(200);
    expect((await limited.nonce()).status).toBe(200);
    expect((await limited.link({ address: '0x' + '00'.repeat(20), signature: await wallet.signMessage({ message: challenge.message }) })).status).toBe(422);
    expect((await limited.link({ address: wallet.address, signature: await wallet.signMessage({ message: challenge.message }) })).status).toBe(200);

    const sixth = await limited.nonce();
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('content-type')).toBe('application/problem+json');
    expect(sixth.problem).toMatchObject({ status: 429, title: 'Too many requests', instance: '/accounts/me/wallet/nonce' });
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A 429 on the link POST too, before its body is even looked at.
    expect((await limited.link({ address: 'nope', signature: 'nope' })).status).toBe(429);

    expect((await limited.me()).status).toBe(200);
    expect((await limited.unlink()).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await bystander.nonce()).status).toBe(200);
    expect((await bystander.nonce()).status).toBe(429);
  }, 120_000);

  it('keeps the count in the shared DynamoDB table, one item per account and window, with a TTL', async () => {
    const caller = freshCaller('counted');
    const api = await client(stack, caller);
    await roomInTheMinute(3, await slowestOf(() => api.me(), 3));
    const windowStart = Math.floor(Date.now() / minute) * minute;
    for (let i = 0; i < 3; i++) await api.nonce();
    const documents = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: stack.dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    try {
      const { Item } = await documents.send(
        new GetCommand({ TableName: 'hatchery', Key: { pk: `ratelimit#wallet-post#${caller.uid}`, sk: String(windowStart) } }),
      );
      expect(Item).toMatchObject({ hits: 3 });
      expect(Item!.expiresAt).toBe((windowStart + 2 * minute) / 1000);
    } finally {
      documents.destroy();
    }
  }, 120_000);
});
