import { connectionStore } from '@hatchery/core/realtime/connections';
import { limits } from '@hatchery/core/limits';
import { addMetric } from '@hatchery/core/metrics';
import { HubError, handleMessage, hubErrors, repliesAsPosts, type HubGroups } from '@hatchery/core/realtime/hub';
import { hubConnections, managementClient, managementEndpoint } from '@hatchery/core/realtime/management';
import type { WsEvent } from '../routes/realtime';
import { wsHandler } from './handler';

const store = connectionStore();

function groupsOf(connectionId: string): HubGroups {
  return {
    async subscribe(address) {
      const result = await store.subscribe(connectionId, address);
      if (result === 'tooManyGroups') throw new HubError(hubErrors.tooManyGroups);
      addMetric('HubSubscriptions');
    },
    unsubscribe: (address) => store.unsubscribe(connectionId, address),
  };
}

const text = (event: WsEvent) => (event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? ''));

/**
 * $default: every message of a hub client (SignalR JSON hub protocol). The
 * answers go back through the management API, as there is no response
 * channel on a WebSocket route, in as many posts as its payload limit needs;
 * a malformed message closes the connection.
 */
export const handler = wsHandler(async (event, context) => {
  const { connectionId } = event.requestContext;
  const outcome = repliesAsPosts(await handleMessage(text(event), groupsOf(connectionId), context.log), limits.hub.managementPayloadBytes);
  const connections = hubConnections(managementClient(managementEndpoint(event.requestContext)));
  for (const post of outcome.replies) {
    if ((await connections.post(connectionId, post)) === 'gone') return { statusCode: 200 };
  }
  // Only after the handshake's answer is out, so no broadcast can come first.
  if (outcome.handshaken) await store.join(connectionId);
  if (outcome.close) await connections.close(connectionId);
  return { statusCode: 200 };
});
