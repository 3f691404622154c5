import { InvokeCommand } from '@aws-sdk/client-lambda';
import { deliveryDeadlines, shardStopAt } from '@hatchery/platform/aws/deadlines';
import { lambdaClient } from '@hatchery/platform/aws/lambda';
import { config } from '@hatchery/platform/config';
import { pacer, type Pacer } from '@hatchery/core/realtime/budget';
import { deliverShard, type FanOutParts, type ShardDelivery, type ShardJob } from '@hatchery/core/realtime/fan-out';
import type { DeliveryLedger } from '@hatchery/core/realtime/ledger';

/**
 * How the listener has one shard of a broadcast posted: it resolves with the
 * shard's delivery once its posts are done. `postsHere` when the listener's
 * own process posts (its metrics then count the posts).
 */
export type ShardInvoker = ((job: ShardJob) => Promise<ShardDelivery>) & { readonly postsHere?: boolean };

/** The fan-out function's answer: its shard's delivery. */
const deliveryOf = (payload: Uint8Array | undefined): ShardDelivery => {
  const { sent = 0, gone = 0, failed = 0, skipped = 0, paceFactor = 1 } = JSON.parse(new TextDecoder().decode(payload)) as Partial<ShardDelivery>;
  return { sent, gone, failed, skipped, paceFactor };
};

/**
 * The fan-out function, invoked synchronously (RequestResponse): the
 * listener learns when the shard is done, how many it reached and what 429s
 * left of its rate, so the next broadcast starts only once this one's posts
 * are over and the budget is never spent twice. An invocation that failed,
 * timed out included, is tried again `deliveryDeadlines.shardRetries` times: the
 * retry resumes after the last connections the failed one claimed in the
 * delivery ledger, so no connection gets the frame twice.
 */
export function functionShards(functionName: string, endpoint = config().LAMBDA_ENDPOINT): ShardInvoker {
  const client = lambdaClient({ endpoint, invocationTimeoutMs: deliveryDeadlines.shardTimeoutMs });
  const encoder = new TextEncoder();
  return async (job) => {
    for (let attempt = 0; ; attempt++) {
      const { FunctionError, Payload } = await client.send(
        new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: encoder.encode(JSON.stringify(job)) }),
      );
      if (!FunctionError) return deliveryOf(Payload);
      if (attempt >= deliveryDeadlines.shardRetries) throw new Error(`shard ${job.shard} failed ${attempt + 1} times: ${new TextDecoder().decode(Payload)}`);
    }
  };
}

/** When a shard the listener posts itself stops posting: as a fan-out function's invocation would, so a 429 is not tried again forever. */
export const shardDeadline = () => shardStopAt(deliveryDeadlines.shardTimeoutMs);

/**
 * Every shard posted by the listener itself, with the fan-out function's code:
 * a listener deployed without the function. Each shard keeps its pacer
 * between broadcasts, as a fan-out function instance does.
 */
export function inProcessShards(parts: Omit<FanOutParts, 'pace'>, ledger: DeliveryLedger): ShardInvoker {
  const pacers = new Map<number, Pacer>();
  const paceOf = (shard: number) => {
    let pace = pacers.get(shard);
    if (!pace) pacers.set(shard, (pace = pacer(0)));
    return pace;
  };
  return Object.assign((job: ShardJob) => deliverShard(job, { ...parts, pace: paceOf(job.shard) }, ledger, shardDeadline()), { postsHere: true });
}
