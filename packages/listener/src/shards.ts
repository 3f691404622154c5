import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { config } from '@hatchery/platform/config';
import { deliverShard, type Delivery, type FanOutParts, type ShardJob } from '@hatchery/core/realtime/fan-out';

/**
 * How the listener hands one shard of a broadcast to be posted: the delivery
 * when it was posted here, 'queued' when a function took it asynchronously.
 */
export type ShardInvoker = (job: ShardJob) => Promise<Delivery | 'queued'>;

/**
 * The fan-out function, invoked asynchronously (InvocationType Event): the
 * promise resolves once Lambda has queued the event, and Lambda itself retries
 * an invocation that fails, without the listener or the other shards.
 */
export function functionShards(functionName: string, endpoint = config().LAMBDA_ENDPOINT): ShardInvoker {
  const client = new LambdaClient({ region: config().AWS_REGION, endpoint, maxAttempts: 3 });
  const encoder = new TextEncoder();
  return async (job) => {
    await client.send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: encoder.encode(JSON.stringify(job)) }));
    return 'queued';
  };
}

/** Every shard posted by the listener itself, with the fan-out function's code: a listener deployed without the function. */
export const inProcessShards =
  (parts: FanOutParts): ShardInvoker =>
  (job) =>
    deliverShard(job, parts);
