import { connectionStore } from '@hatchery/core/realtime/connections';
import { wsHandler } from './handler';

const store = connectionStore();

/** $disconnect: forgets the connection and its groups (best effort in AWS; the items' TTL covers a missed one). */
export const handler = wsHandler(async (event) => {
  await store.remove(event.requestContext.connectionId);
  return { statusCode: 200 };
});
