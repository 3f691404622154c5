import { connectionStore } from '@hatchery/core/realtime/connections';
import { deliveryLedger } from '@hatchery/core/realtime/ledger';
import { addMetric } from '@hatchery/platform/telemetry/metrics';
import { HubError, handleMessage, hubErrors, repliesAsPosts, type HubGroups } from '@hatchery/core/realtime/hub';
import { hubConnections, managementClient, managementEndpoint } from '@hatchery/platform/aws/management';
import type { WsEvent } from '../routes/realtime';
import { wsHandler } from './handler';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

const store = connectionStore();
const ledger = deliveryLedger();

function groupsOf(connectionId: string): HubGroups {
  return {
    async subscribe(address) {
      const result = await store.subscribe(connectionId, address);
      if (result === 'tooManyGroups') throw new HubError(hubErrors.tooManyGroups);
      addMetric('HubSubscriptions');
      return ledger.forgeSequence(address);
    },
    unsubscribe: (address) => store.unsubscribe(connectionId, address),
  };
}

const text = (event: WsEvent) => (event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? ''));

/**
 * $default: every message of a hub client (SignalR JSON hub protocol). An
 * answer that fits one message (a ping's, an invocation's completion) is the
 * function's return value, which the route response sends back to the
 * caller: no management API call, no second request on the account's
 * throttle. The rest go through the management API, in as many posts as its
 * payload limit needs: the handshake's answer, because it must be out before
 * the connection joins the broadcasts (a returned body leaves only after the
 * function has returned, by when a broadcast could have overtaken it); and a
 * malformed message's close, which follows its answer.
 */
export const handler = wsHandler(async (event, context) => {
  const { connectionId } = event.requestContext;
  const outcome = repliesAsPosts(await handleMessage(text(event), groupsOf(connectionId), context.log), webSocketApiQuotas.managementPayloadBytes);
  if (!outcome.handshaken && !outcome.close && outcome.replies.length <= 1)
    return { statusCode: 200, ...(outcome.replies[0] !== undefined && { body: outcome.replies[0] }) };
  const connections = hubConnections(managementClient(managementEndpoint(event.requestContext)));
  for (const post of outcome.replies) {
    const posted = await connections.post(connectionId, post);
    if (posted === 'gone') return { statusCode: 200 };
    // Refused (throttled, never sent) after the client's own retries: the message fails, and the connection joins nothing.
    if (posted !== 'sent') throw posted.error;
  }
  // Only after the handshake's answer is out, so no broadcast can come first.
  if (outcome.handshaken) await store.join(connectionId);
  if (outcome.close) await connections.close(connectionId);
  return { statusCode: 200 };
});
