import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { awsSettings } from '@hatchery/platform/config/aws';
import { logger } from '@hatchery/platform/telemetry/logger';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { pacer } from '@hatchery/core/realtime/budget';
import { fanOutLimits, deliverShard, shardJobSchema, type ShardDelivery } from '@hatchery/core/realtime/fan-out';
import { deliveryLedger } from '@hatchery/core/realtime/ledger';
import { shardStopAt } from '@hatchery/platform/aws/deadlines';
import { managementConnections } from '@hatchery/platform/aws/management';
import { publishMetrics } from '../middleware/metrics';
import { shardMetrics } from '../middleware/shard-metrics';
import { injectLogContext } from '../middleware/request-logger';
import { traceInvocation } from '../middleware/tracing';
import { copyProcessEnvironment } from '@hatchery/platform/process-environment';

copyProcessEnvironment();
const store = connectionStore();
const ledger = deliveryLedger();
const log = logger().child({ component: 'fan-out' });
/** One pacer per instance, so what a 429 taught one shard slows the next this instance posts. */
const pace = pacer(0);

/**
 * One shard of a broadcast: the listener invokes the function synchronously
 * once per connection shard, with the event's ledger key, the encoded frame
 * and the shard's posting rate, and reads the delivery it answers. A throw (a
 * bad event, a failed read) happens before the first post; a retry, of a
 * throw or of a timeout, resumes after what the ledger says was claimed
 * (core/realtime/fan-out.ts, deliverShard), and no other shard is touched.
 */
async function fanOutShard(event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<ShardDelivery> {
  const job = shardJobSchema.parse(event);
  const endpoint = awsSettings().WEBSOCKET_MANAGEMENT_ENDPOINT;
  if (!endpoint) throw new Error('The fan-out function needs WEBSOCKET_MANAGEMENT_ENDPOINT (the WebSocket API management endpoint).');
  const connections = managementConnections(endpoint, fanOutLimits.concurrency, 'broadcast');
  const delivery = await deliverShard(
    job,
    { store, connections, concurrency: fanOutLimits.concurrency, log, pace },
    ledger,
    shardStopAt(context.getRemainingTimeInMillis()),
  );
  log.debug({ shard: job.shard, ...delivery }, 'shard fanned out');
  return delivery;
}

/** The fan-out function: its lines with the Lambda context, traced, and its shard's figures published as the HTTP handlers publish theirs. */
export const handler = middy<unknown, ShardDelivery, Error, Context>()
  .use(injectLogContext())
  .use(traceInvocation<unknown, ShardDelivery, Context>())
  .use(publishMetrics())
  .use(shardMetrics<Context>())
  .handler(fanOutShard);
