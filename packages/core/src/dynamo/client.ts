import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { traceAwsClient } from '../tracing';

let client: DynamoDBDocumentClient | undefined;

/** The process's DynamoDB document client, pointed at DYNAMODB_ENDPOINT when set (dynalite locally). */
export function dynamo(): DynamoDBDocumentClient {
  if (!client) {
    const { DYNAMODB_ENDPOINT, AWS_REGION } = config();
    client = DynamoDBDocumentClient.from(traceAwsClient(new DynamoDBClient({ region: AWS_REGION, endpoint: DYNAMODB_ENDPOINT, maxAttempts: 3 })));
  }
  return client;
}

export const tableName = () => config().DYNAMODB_TABLE;
