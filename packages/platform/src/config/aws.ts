import * as z from '../schema';
import { settingsReader } from './environment';
import { nonEmpty } from './fields';

/** Where the AWS APIs are: AWS's own in AWS, the local stack's stand-ins on a laptop. */
export const awsSchema = z.object({
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  DYNAMODB_TABLE: nonEmpty('hatchery'),
  AWS_REGION: nonEmpty('us-east-1'),
  WEBSOCKET_MANAGEMENT_ENDPOINT: z.optional(z.url()),
  /** The Lambda API the listener invokes the fan-out function through (the local stack's); AWS's by default. */
  LAMBDA_ENDPOINT: z.optional(z.url()),
});

export const awsSettings = settingsReader(awsSchema);
