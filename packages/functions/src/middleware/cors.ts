import { corsPolicy, isOriginAllowed } from '../cors-policy';
import { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader } from '@hatchery/core/indexer/names';
import type { HttpEvent, HttpMiddleware } from './types';

/** CORS headers for an allowed origin; none at all for any other (docs/deploying.md, CORS). */
export function corsHeaders(event: HttpEvent): Record<string, string> {
  const origin = event.headers?.origin;
  if (!origin || !isOriginAllowed(origin, corsPolicy())) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': `retry-after,www-authenticate,${indexedBlockHeader},${safeBlockHeader},${finalizedBlockHeader}`,
    vary: 'Origin',
  };
}

export const preflightHeaders = {
  'access-control-allow-methods': 'GET,POST,DELETE,OPTIONS',
  // The SignalR browser client adds the last two to its negotiate request.
  'access-control-allow-headers': 'authorization,content-type,x-requested-with,x-signalr-user-agent',
  'access-control-max-age': '600',
};

export const cors = (): HttpMiddleware => {
  const addHeaders: NonNullable<HttpMiddleware['after']> = (request) => {
    if (!request.response) return;
    Object.assign((request.response.headers ??= {}), corsHeaders(request.event));
  };
  return { after: addHeaders, onError: addHeaders };
};
