import { linkedResources } from '@hatchery/platform/config';
import { limits } from '@hatchery/core/limits';
import { fanOutHandler } from '@hatchery/functions/routes/realtime';
import { lambda, sizing, type FunctionContext } from './functions';
import { manageConnections } from './hub';

/** An event that waited this long in Lambda's async queue is dropped: clients keep the newest marketChanged, so a later one supersedes it. */
const maximumEventAgeSeconds = 300;

/**
 * The fan-out function: the listener invokes it asynchronously once per
 * connection shard of a large broadcast, with the encoded frame; it reads its
 * shard and posts through the management API. A shard fails before its first
 * post or not at all, so Lambda's retries re-send nothing.
 */
export function createFanOut(context: FunctionContext, hub: sst.aws.ApiGatewayWebSocket): sst.aws.Function {
  return new sst.aws.Function(
    linkedResources.FANOUT_FUNCTION_NAME.name,
    lambda(fanOutHandler, context, sizing.fanOut, 'Realtime fan-out: one broadcast to one connection shard', {
      environment: { WEBSOCKET_MANAGEMENT_ENDPOINT: hub.managementEndpoint },
      permissions: [manageConnections(hub)],
      retries: limits.hub.shardRetries,
      transform: {
        eventInvokeConfig: (args) => {
          args.maximumEventAgeInSeconds = maximumEventAgeSeconds;
        },
      },
    }),
  );
}
