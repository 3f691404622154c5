import { InvokeCommand } from '@aws-sdk/client-lambda';
import { lambdaClient } from '@hatchery/platform/aws/lambda';
import { config } from '@hatchery/platform/config';
import { limits } from '@hatchery/core/limits';
import { deliverShard, type Delivery, type FanOutParts, type ShardJob } from '@hatchery/core/realtime/fan-out';

/**
 * How the listener has one shard of a broadcast posted: it resolves with the
 * shard's delivery once its posts are done. `postsHere` when the listener's
 * own process posts (its metrics then count the posts).
 */
export type ShardInvoker = ((job: ShardJob) => Promise<Delivery>) & { readonly postsHere?: boolean };

/** The fan-out function's answer: its shard's delivery. */
const deliveryOf = (payload: Uint8Array | undefined): Delivery => {
  const { sent = 0, gone = 0, failed = 0, skipped = 0 } = JSON.parse(new TextDecoder().decode(payload)) as Partial<Delivery>;
  return { sent, gone, failed, skipped };
};

/**
 * The fan-out function, invoked synchronously (RequestResponse): the
 * listener learns when the shard is done and how many it reached, so the next
 * broadcast starts only once this one's posts are over and the budget is
 * never spent twice. A shard fails before its first post or not at all, so an
 * invocation that failed is tried again here, `limits.hub.shardRetries`
 * times, as Lambda would retry an asynchronous one.
 */
export function functionShards(functionName: string, endpoint = config().LAMBDA_ENDPOINT): ShardInvoker {
  const client = lambdaClient({ endpoint, invocationTimeoutMs: limits.hub.shardTimeoutMs });
  const encoder = new TextEncoder();
  return async (job) => {
    for (let attempt = 0; ; attempt++) {
      const { FunctionError, Payload } = await client.send(
        new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: encoder.encode(JSON.stringify(job)) }),
      );
      if (!FunctionError) return deliveryOf(Payload);
      if (attempt >= limits.hub.shardRetries) throw new Error(`shard ${job.shard} failed ${attempt + 1} times: ${new TextDecoder().decode(Payload)}`);
    }
  };
}

/** When a shard the listener posts itself stops posting: as a fan-out function's invocation would, so a 429 is not tried again forever. */
export const shardDeadline = () => Date.now() + limits.hub.shardTimeoutMs - limits.hub.shardDeadlineMarginMs;

/** Every shard posted by the listener itself, with the fan-out function's code: a listener deployed without the function. */
export const inProcessShards = (parts: FanOutParts): ShardInvoker =>
  Object.assign((job: ShardJob) => deliverShard(job, parts, shardDeadline()), { postsHere: true });
