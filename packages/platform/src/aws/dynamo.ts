import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { AwsClient, type CredentialsProvider } from './client';
import { config } from '../config';
import { traced } from '../telemetry/tracing';

/** An item, a key or a map of expression values as the code writes them: plain values, marshalled on the way (as lib-dynamodb's document client does). */
export type Item = Record<string, NativeAttributeValue>;

type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

type Expressions = {
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
};
type ReturnValues = 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW';

/** The operations the service makes, with the parameters it uses (DynamoDB's names, so AWS's reference applies). */
export interface Operations {
  GetItem: {
    input: { TableName: string; Key: Item; ConsistentRead?: boolean; ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string> };
    output: { Item?: Item };
  };
  PutItem: { input: { TableName: string; Item: Item; ConditionExpression?: string; ReturnValues?: 'NONE' | 'ALL_OLD' } & Expressions; output: { Attributes?: Item } };
  UpdateItem: {
    input: { TableName: string; Key: Item; UpdateExpression: string; ConditionExpression?: string; ReturnValues?: ReturnValues } & Expressions;
    output: { Attributes?: Item };
  };
  DeleteItem: { input: { TableName: string; Key: Item; ConditionExpression?: string; ReturnValues?: 'NONE' | 'ALL_OLD' } & Expressions; output: { Attributes?: Item } };
  Query: {
    input: {
      TableName: string;
      KeyConditionExpression: string;
      FilterExpression?: string;
      ProjectionExpression?: string;
      Limit?: number;
      ExclusiveStartKey?: Item;
      ConsistentRead?: boolean;
    } & Expressions;
    output: { Items?: Item[]; LastEvaluatedKey?: Item; Count?: number; ScannedCount?: number };
  };
  BatchWriteItem: { input: { RequestItems: Record<string, WriteRequest[]> }; output: { UnprocessedItems?: Record<string, WriteRequest[]> } };
}
export type Operation = keyof Operations;

/** The members that hold an item, a key or expression values, marshalled in (input) and unmarshalled out (output). */
const itemMembers = ['Key', 'Item', 'ExpressionAttributeValues', 'ExclusiveStartKey', 'Attributes', 'LastEvaluatedKey'] as const;
type Message = Record<string, unknown>;
type Convert = (item: Message) => Message;

// lib-dynamodb's defaults: no conversion of empty values, undefined refused, numbers as JS numbers. Binary values
// would need base64 on this JSON wire; no item of the service has any.
const toWire: Convert = (item) => marshall(item as Item);
const fromWire: Convert = (item) => unmarshall(item as Parameters<typeof unmarshall>[0]);

const convertWrites = (requests: Record<string, Message[]>, convert: Convert) =>
  Object.fromEntries(
    Object.entries(requests).map(([table, writes]) => [
      table,
      writes.map(({ PutRequest: put, DeleteRequest: remove }) =>
        put ? { PutRequest: { Item: convert((put as Message).Item as Message) } } : { DeleteRequest: { Key: convert((remove as Message).Key as Message) } },
      ),
    ]),
  );

/** A request or an answer with its items converted: `convert` is marshall on the way in, unmarshall on the way out. */
function convertItems(message: Message, convert: Convert): Message {
  const converted: Message = { ...message };
  for (const member of itemMembers) if (message[member] !== undefined) converted[member] = convert(message[member] as Message);
  if (Array.isArray(message.Items)) converted.Items = (message.Items as Message[]).map(convert);
  for (const member of ['RequestItems', 'UnprocessedItems'] as const) {
    if (message[member] !== undefined) converted[member] = convertWrites(message[member] as Record<string, Message[]>, convert);
  }
  return converted;
}

/**
 * DynamoDB's JSON API (`POST /` with `X-Amz-Target: DynamoDB_20120810.<Operation>`),
 * items as plain values, each call traced as the SDK's client capture traced it.
 */
export class DynamoClient {
  private readonly client: AwsClient;

  constructor(options: { region: string; endpoint?: string; credentials?: CredentialsProvider }) {
    const { region } = options;
    const endpoint = options.endpoint ?? `https://dynamodb.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
    // The SDK's client kept up to 50 sockets open per process.
    this.client = new AwsClient({ service: 'dynamodb', region, endpoint, maxSockets: 50, credentials: options.credentials });
  }

  send<O extends Operation>(operation: O, input: Operations[O]['input']): Promise<Operations[O]['output']> {
    const { TableName, RequestItems } = input as { TableName?: string; RequestItems?: Message };
    const tables = TableName !== undefined ? { table_name: TableName } : { table_names: Object.keys(RequestItems ?? {}) };
    return traced(
      'DynamoDB',
      async () => {
        const response = await this.client.send({
          method: 'POST',
          path: '/',
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${operation}` },
          body: JSON.stringify(convertItems(input, toWire)),
        });
        return convertItems(JSON.parse(response.body.toString('utf8')) as Message, fromWire) as Operations[O]['output'];
      },
      { namespace: 'aws', aws: { operation, region: this.client.region, ...tables } },
    );
  }

  destroy(): void {
    this.client.destroy();
  }
}

let client: DynamoClient | undefined;

/** The process's DynamoDB client, pointed at DYNAMODB_ENDPOINT when set (dynalite locally). */
export function dynamo(): DynamoClient {
  if (!client) {
    const { DYNAMODB_ENDPOINT, AWS_REGION } = config();
    client = new DynamoClient({ region: AWS_REGION, endpoint: DYNAMODB_ENDPOINT });
  }
  return client;
}

export const tableName = () => config().DYNAMODB_TABLE;
