import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';

let client: DynamoDBDocumentClient | undefined;

/** The process's DynamoDB document client, pointed at DYNAMODB_ENDPOINT when set (dynalite locally). */
export function dynamo(): DynamoDBDocumentClient {
  if (!client) {
    const { DYNAMODB_ENDPOINT, AWS_REGION } = config();
    client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: AWS_REGION, endpoint: DYNAMODB_ENDPOINT, maxAttempts: 3 }));
  }
  return client;
}

export const tableName = () => config().DYNAMODB_TABLE;
