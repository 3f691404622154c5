import { corsPolicy, isOriginAllowed } from '../cors-policy';
import { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader } from '@hatchery/core/indexer/names';
import type { HttpEvent, HttpMiddleware } from './types';

const exposedHeaders = `retry-after,www-authenticate,${indexedBlockHeader},${safeBlockHeader},${finalizedBlockHeader}`;

/** Sets the CORS headers of an allowed origin on `headers`; none at all for any other (docs/deploying.md, CORS). */
function setCorsHeaders(event: HttpEvent, headers: Record<string, string | number | boolean>): void {
  const origin = event.headers?.origin;
  if (!origin || !isOriginAllowed(origin, corsPolicy())) return;
  headers['access-control-allow-origin'] = origin;
  headers['access-control-allow-credentials'] = 'true';
  headers['access-control-expose-headers'] = exposedHeaders;
  headers.vary = 'Origin';
}

/** The CORS headers of an allowed origin; none at all for any other. */
export function corsHeaders(event: HttpEvent): Record<string, string> {
  const headers: Record<string, string> = {};
  setCorsHeaders(event, headers);
  return headers;
}

export const preflightHeaders = {
  'access-control-allow-methods': 'GET,POST,DELETE,OPTIONS',
  // The SignalR browser client adds the last two to its negotiate request.
  'access-control-allow-headers': 'authorization,content-type,x-requested-with,x-signalr-user-agent',
  'access-control-max-age': '600',
};

export const cors = (): HttpMiddleware => {
  const addHeaders: NonNullable<HttpMiddleware['after']> = (request) => {
    if (request.response) setCorsHeaders(request.event, (request.response.headers ??= {}));
  };
  return { after: addHeaders, onError: addHeaders };
};
