import type { Context } from 'aws-lambda';
import { config } from '@hatchery/core/config';
import { limits } from '@hatchery/core/limits';
import { logger } from '@hatchery/core/logger';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { deliverShard, shardJobSchema, type Delivery } from '@hatchery/core/realtime/fan-out';
import { hubConnections, managementClient } from '@hatchery/core/realtime/management';

const store = connectionStore();
const log = logger().child({ component: 'fan-out' });

/**
 * The fan-out function: the listener invokes it asynchronously once per
 * connection shard of a broadcast, with the encoded frame. A throw (a bad
 * event, a failed read) happens before the first post, so Lambda's retry of
 * this invocation re-sends nothing, and no other shard is touched.
 */
export const handler = async (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<Delivery> => {
  const job = shardJobSchema.parse(event);
  const endpoint = config().WEBSOCKET_MANAGEMENT_ENDPOINT;
  if (!endpoint) throw new Error('The fan-out function needs WEBSOCKET_MANAGEMENT_ENDPOINT (the WebSocket API management endpoint).');
  const connections = hubConnections(managementClient(endpoint, limits.hub.fanOutConcurrency));
  const stopAt = Date.now() + context.getRemainingTimeInMillis() - limits.hub.shardDeadlineMarginMs;
  const delivery = await deliverShard(job, { store, connections, concurrency: limits.hub.fanOutConcurrency, log }, stopAt);
  log.debug({ shard: job.shard, ...delivery }, 'shard fanned out');
  return delivery;
};
