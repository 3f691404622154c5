import { linkedResources } from '@hatchery/platform/config';
import { tableDefinition } from '@hatchery/platform/aws/table';

const fieldTypes = { S: 'string', N: 'number', B: 'binary' } as const;

/** The service's one DynamoDB table, from the definition the local stack creates it with. */
export function createTable(): sst.aws.Dynamo {
  const { partitionKey, sortKey, ttlAttribute } = tableDefinition;
  return new sst.aws.Dynamo(linkedResources.DYNAMODB_TABLE.name, {
    fields: { [partitionKey.name]: fieldTypes[partitionKey.type], [sortKey.name]: fieldTypes[sortKey.type] },
    primaryIndex: { hashKey: partitionKey.name, rangeKey: sortKey.name },
    ttl: ttlAttribute,
  });
}
