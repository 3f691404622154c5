import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable } from '@hatchery/platform/aws/table';
import { deliveryLedger, type DeliveryLedger } from '@hatchery/core/realtime/ledger';
import { startDynalite } from '@hatchery/local/dynamo';
import { dynamoClient } from '@hatchery/platform/aws/dynamo';

/** The delivery ledger's conditional writes, against a real DynamoDB API (dynalite). */

// The SDK's default credential chain takes these first; the clients read their region from the configuration, which needs a database URL.
process.env.AWS_ACCESS_KEY_ID = 'test';
process.env.AWS_SECRET_ACCESS_KEY = 'test';
process.env.DATABASE_URL ??= 'postgres://unused@127.0.0.1:1/unused';

let dynalite: Awaited<ReturnType<typeof startDynalite>>;
let ledger: DeliveryLedger;
const table = 'hatchery-ledger';

beforeAll(async () => {
  dynalite = await startDynalite();
  await ensureTable(new DynamoDBClient({ endpoint: dynalite.endpoint, region: 'us-east-1' }), table);
  ledger = deliveryLedger({ client: dynamoClient({ endpoint: dynalite.endpoint }), table });
});
afterAll(() => dynalite?.stop());

describe('the delivery ledger', () => {
  it('lets a shard’s claims only move on, and takes its own claim again (an SDK retry of a write that applied) but no one else’s', async () => {
    expect(await ledger.claimedThrough('marketChanged#1', 4)).toBeUndefined();
    expect(await ledger.claimShard('marketChanged#1', 4, 'C00063=', 'first')).toBe(true);
    expect(await ledger.claimShard('marketChanged#1', 4, 'C00063=', 'first'), 'the same claim again').toBe(true);
    expect(await ledger.claimShard('marketChanged#1', 4, 'C00063=', 'second'), 'another invocation, as far').toBe(false);
    expect(await ledger.claimShard('marketChanged#1', 4, 'C00010=', 'second'), 'another invocation, not as far').toBe(false);
    expect(await ledger.claimShard('marketChanged#1', 4, 'C00127=', 'second'), 'another invocation, further').toBe(true);
    expect(await ledger.claimedThrough('marketChanged#1', 4)).toBe('C00127=');
    expect(await ledger.claimedThrough('marketChanged#1', 5), 'another shard').toBeUndefined();
    expect(await ledger.claimedThrough('marketChanged#2', 4), 'another event').toBeUndefined();
  });

  it('numbers a buyer’s forgeFulfilled 1, 2, 3…, answers the last number given (0 before the first), and claims each fulfilment once', async () => {
    const buyer = `0x${'ab'.repeat(20)}`;
    expect(await ledger.forgeSequence(buyer)).toBe(0);
    expect([await ledger.nextForgeSequence(buyer), await ledger.nextForgeSequence(buyer), await ledger.nextForgeSequence(buyer)]).toEqual([1, 2, 3]);
    expect(await ledger.forgeSequence(buyer)).toBe(3);
    expect(await ledger.nextForgeSequence(`0x${'cd'.repeat(20)}`), 'another buyer’s stream').toBe(1);
    expect(await ledger.claimFulfilment(buyer, '900001')).toBe(true);
    expect(await ledger.claimFulfilment(buyer, '900001'), 'a listener that takes over and reads it again').toBe(false);
    expect(await ledger.claimFulfilment(buyer, '900002')).toBe(true);
  });
});
