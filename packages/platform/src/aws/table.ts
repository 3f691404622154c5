import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

/**
 * The service's one DynamoDB table, shared by the local stack (created here)
 * and infra/table.ts (which reads the same definition). Single-table layout,
 * written by @hatchery/core's stores:
 *   pk "connections#<n>"    sk <connectionId>   every live hub connection (+ its groups), in shard n of its id (realtime/connections.ts)
 *   pk "group#<address>"    sk <connectionId>   members of one address group
 *   pk "ratelimit#<key>"    sk <window>         fixed-window request counters (accounts/rate-limit.ts)
 *   pk "delivery#<event>"   sk "shard#<n>"      the connections of a shard a broadcast has claimed (realtime/ledger.ts)
 *   pk "forge#<buyer>"      sk "sequence"       the number of the buyer's last forgeFulfilled
 *   pk "forge#<buyer>"      sk "request#<id>"   a fulfilment whose forgeFulfilled was claimed
 * Every item carries `expiresAt` (epoch seconds) so abandoned ones expire.
 */
export const tableDefinition = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  ttlAttribute: 'expiresAt',
} as const;

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: tableDefinition.partitionKey.name, AttributeType: tableDefinition.partitionKey.type },
      { AttributeName: tableDefinition.sortKey.name, AttributeType: tableDefinition.sortKey.type },
    ],
    KeySchema: [
      { AttributeName: tableDefinition.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: tableDefinition.sortKey.name, KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/**
 * Creates the table (and its TTL) when it does not exist, and returns once it
 * is ACTIVE: a table still CREATING answers ResourceNotFoundException. The
 * local stack calls this at start.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
  }
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await waitUntilTableExists({ client, minDelay: 0.05, maxDelay: 1, maxWaitTime: 60 }, { TableName: tableName });
  await client
    .send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true } }))
    .catch(() => undefined); // dynalite does not implement TTL; AWS does, via infra/table.ts.
}
