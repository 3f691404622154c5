import { linkedResources } from '@hatchery/platform/config';
import { fanOutHandler } from '@hatchery/functions/routes/realtime';
import { lambda, sizing, type FunctionContext } from './functions';
import { manageConnections } from './hub';

/**
 * The fan-out function: the listener invokes it synchronously once per
 * connection shard of a large broadcast, with the encoded frame and the
 * shard's part of the fan-out budget; it reads its shard, posts through the
 * management API at that rate and answers how many it reached. A shard fails
 * before its first post or not at all, so the listener's retries re-send
 * nothing; nothing invokes it asynchronously, so Lambda retries nothing.
 */
export function createFanOut(context: FunctionContext, hub: sst.aws.ApiGatewayWebSocket): sst.aws.Function {
  return new sst.aws.Function(
    linkedResources.FANOUT_FUNCTION_NAME.name,
    lambda(fanOutHandler, context, sizing.fanOut, 'Realtime fan-out: one broadcast to one connection shard', {
      environment: { WEBSOCKET_MANAGEMENT_ENDPOINT: hub.managementEndpoint },
      permissions: [manageConnections(hub)],
      retries: 0,
    }),
  );
}
