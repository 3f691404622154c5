import { config } from '@hatchery/core/config';
import { isOriginAllowed } from '@hatchery/core/cors';
import { AppError } from '@hatchery/core/errors';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { connectionTokenPattern } from '@hatchery/core/realtime/protocol';
import type { WsEvent } from '../routes/realtime';
import { header, wsHandler } from './handler';

const store = connectionStore();

/** A page may connect from its own origin, or from one the CORS settings allow (SPEC.md: other origins are blocked). */
function originAllowed(event: WsEvent): boolean {
  const origin = header(event, 'origin');
  if (!origin) return true;
  const host = header(event, 'host');
  try {
    if (host && new URL(origin).host === host) return true;
  } catch {
    return false;
  }
  const { CORS_ORIGINS, CORS_ALLOWED_HOST_SUFFIXES } = config();
  return isOriginAllowed(origin, { origins: CORS_ORIGINS, hostSuffixes: CORS_ALLOWED_HOST_SUFFIXES });
}

/** $connect: a non-2xx answer refuses the WebSocket upgrade. */
export const handler = wsHandler(async (event) => {
  if (!originAllowed(event)) throw new AppError('forbidden', 'This origin may not connect to the hub.');
  const id = event.queryStringParameters?.id;
  if (id !== undefined && !connectionTokenPattern.test(id)) {
    throw new AppError('validation', 'The id is not a connection token from negotiate.', { id: ['must be the connectionToken that negotiate returned'] });
  }
  await store.add(event.requestContext.connectionId, event.requestContext.connectedAt);
  return { statusCode: 200 };
});
