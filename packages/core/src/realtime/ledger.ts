import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '@hatchery/platform/aws/dynamo';

/**
 * What the fan-out has claimed, on the service's one table (platform/aws/table.ts),
 * so that no connection gets an event twice whatever is retried or taken
 * over (docs/realtime.md, "What the hub guarantees"). Every claim is written
 * before the posts it covers: a process that dies after a claim loses those
 * posts (the client sees the gap and reads again) but never repeats them.
 */
export interface DeliveryLedger {
  /** The highest connection id of a shard already claimed for an event: its posts went out, or may have. */
  claimedThrough(event: string, shard: number): Promise<string | undefined>;
  /**
   * Claims a shard's connections up to `through` for `claimant` (one invocation); false when another claimed as far
   * or further. The same claimant's claim again succeeds, so a write the SDK retried after it applied is no refusal.
   */
  claimShard(event: string, shard: number, through: string, claimant: string): Promise<boolean>;
  /** The next number of a buyer's forgeFulfilled stream: 1, 2, 3… as events are claimed. */
  nextForgeSequence(buyer: string): Promise<number>;
  /** The last number of a buyer's forgeFulfilled stream (0 before the first), read consistently: every number given after it is above it. */
  forgeSequence(buyer: string): Promise<number>;
  /** Claims a fulfilment's event; false when a listener before this one claimed it. */
  claimFulfilment(buyer: string, requestId: string): Promise<boolean>;
}

const epochSeconds = (ms: number) => Math.floor(ms / 1000);
const day = 24 * 60 * 60_000;
/** A shard's claim is read only by the retries of one broadcast, within minutes. */
export const shardClaimLifetimeMs = day;
/** Longer than any takeover or resumed cursor can reach back, so a re-read fulfilment still finds its claim. */
const fulfilmentClaimLifetimeMs = 30 * day;
/** A buyer's stream number outlives any client's session; one that expires starts again at 1, which a client takes as a gap. */
const forgeSequenceLifetimeMs = 365 * day;

const ledgerKeys = {
  shard: (event: string, shard: number) => ({ pk: `delivery#${event}`, sk: `shard#${shard}` }),
  forgeSequence: (buyer: string) => ({ pk: `forge#${buyer}`, sk: 'sequence' }),
  fulfilment: (buyer: string, requestId: string) => ({ pk: `forge#${buyer}`, sk: `request#${requestId}` }),
} as const;

const isConditionFailure = (error: unknown) => (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';

export function deliveryLedger(options: { client?: DynamoDBDocumentClient; table?: string; now?: () => number } = {}): DeliveryLedger {
  const client = () => options.client ?? dynamo();
  const table = () => options.table ?? tableName();
  const now = options.now ?? Date.now;
  const expiresAt = (lifetimeMs: number) => epochSeconds(now() + lifetimeMs);
  return {
    async claimedThrough(event, shard) {
      const { Item } = await client().send(new GetCommand({ TableName: table(), Key: ledgerKeys.shard(event, shard), ConsistentRead: true }));
      return Item?.through as string | undefined;
    },
    async claimShard(event, shard, through, claimant) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: ledgerKeys.shard(event, shard),
            UpdateExpression: 'SET #through = :through, #claimant = :claimant, #expiresAt = :expiresAt',
            ConditionExpression: 'attribute_not_exists(#through) OR #through < :through OR (#through = :through AND #claimant = :claimant)',
            ExpressionAttributeNames: { '#through': 'through', '#claimant': 'claimant', '#expiresAt': 'expiresAt' },
            ExpressionAttributeValues: { ':through': through, ':claimant': claimant, ':expiresAt': expiresAt(shardClaimLifetimeMs) },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
    async nextForgeSequence(buyer) {
      const { Attributes } = await client().send(
        new UpdateCommand({
          TableName: table(),
          Key: ledgerKeys.forgeSequence(buyer),
          UpdateExpression: 'ADD #sequence :one SET #expiresAt = :expiresAt',
          ExpressionAttributeNames: { '#sequence': 'sequence', '#expiresAt': 'expiresAt' },
          ExpressionAttributeValues: { ':one': 1, ':expiresAt': expiresAt(forgeSequenceLifetimeMs) },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.sequence);
    },
    async forgeSequence(buyer) {
      const { Item } = await client().send(
        new GetCommand({
          TableName: table(),
          Key: ledgerKeys.forgeSequence(buyer),
          ProjectionExpression: '#sequence',
          ExpressionAttributeNames: { '#sequence': 'sequence' },
          ConsistentRead: true,
        }),
      );
      return Number(Item?.sequence ?? 0);
    },
    async claimFulfilment(buyer, requestId) {
      try {
        await client().send(
          new PutCommand({
            TableName: table(),
            Item: { ...ledgerKeys.fulfilment(buyer, requestId), expiresAt: expiresAt(fulfilmentClaimLifetimeMs) },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
  };
}
