import { requestsSettings } from '@hatchery/platform/config/requests';
import { corsPolicy, isRequestOriginAllowed } from '../cors-policy';
import { AppError } from '@hatchery/core/errors';
import { cameThroughRouter, originVerifyHeader } from '../origin-verify';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { connectionTokenPattern } from '@hatchery/platform/signalr/protocol';
import { header, wsHandler } from './handler';

const store = connectionStore();

/** $connect: a non-2xx answer refuses the WebSocket upgrade. */
export const handler = wsHandler(async (event) => {
  if (!cameThroughRouter(header(event, originVerifyHeader), requestsSettings().ORIGIN_VERIFY_SECRET)) {
    throw new AppError('forbidden', 'Connections must come through the service’s base URL.');
  }
  if (!isRequestOriginAllowed(header(event, 'origin'), header(event, 'host'), corsPolicy())) {
    throw new AppError('forbidden', 'This origin may not connect to the hub.');
  }
  const id = event.queryStringParameters?.id;
  if (id !== undefined && !connectionTokenPattern.test(id)) {
    throw new AppError('validation', 'The id is not a connection token from negotiate.', { id: ['must be the connectionToken that negotiate returned'] });
  }
  await store.add(event.requestContext.connectionId, event.requestContext.connectedAt);
  return { statusCode: 200 };
});
