import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { awsSettings } from '@hatchery/platform/config/aws';
import { limits } from '@hatchery/core/limits';
import { logger } from '@hatchery/platform/telemetry/logger';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { deliverShard, shardJobSchema, type Delivery } from '@hatchery/core/realtime/fan-out';
import { hubConnections, managementClient } from '@hatchery/platform/aws/management';
import { publishMetrics, shardMetrics } from '../middleware/metrics';
import { injectLogContext } from '../middleware/request-logger';
import { traceInvocation } from '../middleware/tracing';

const store = connectionStore();
const log = logger().child({ component: 'fan-out' });

/**
 * One shard of a broadcast: the listener invokes the function synchronously
 * once per connection shard, with the encoded frame and the shard's posting
 * rate, and reads the delivery it answers. A throw (a bad event, a failed
 * read) happens before the first post, so the listener's retry of this
 * invocation re-sends nothing, and no other shard is touched.
 */
async function fanOutShard(event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<Delivery> {
  const job = shardJobSchema.parse(event);
  const endpoint = awsSettings().WEBSOCKET_MANAGEMENT_ENDPOINT;
  if (!endpoint) throw new Error('The fan-out function needs WEBSOCKET_MANAGEMENT_ENDPOINT (the WebSocket API management endpoint).');
  // A shard given a rate paces its posts, and its pacer retries a throttled post itself.
  const paced = { paced: job.postsPerSecond !== undefined };
  const connections = hubConnections(managementClient(endpoint, limits.hub.fanOutConcurrency, 'default', paced));
  const stopAt = Date.now() + context.getRemainingTimeInMillis() - limits.hub.shardDeadlineMarginMs;
  const delivery = await deliverShard(job, { store, connections, concurrency: limits.hub.fanOutConcurrency, log }, stopAt);
  log.debug({ shard: job.shard, ...delivery }, 'shard fanned out');
  return delivery;
}

/** The fan-out function: its lines with the Lambda context, traced, and its shard's figures published as the HTTP handlers publish theirs. */
export const handler = middy<unknown, Delivery, Error, Context>()
  .use(injectLogContext())
  .use(traceInvocation<unknown, Delivery, Context>())
  .use(publishMetrics())
  .use(shardMetrics<Context>())
  .handler(fanOutShard);
