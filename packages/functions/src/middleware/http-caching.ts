import { hash } from 'node:crypto';
import type { HttpRoute } from '../routes';
import type { HttpMiddleware } from './types';

/** Successful public GETs: what a shared cache (CloudFront) may serve without asking, then serve stale while it revalidates. */
export const publicCache = { sMaxAgeSeconds: 5, staleWhileRevalidateSeconds: 5 } as const;

const { sMaxAgeSeconds, staleWhileRevalidateSeconds } = publicCache;
/** Browsers revalidate every time (cheap with the ETag); shared caches keep a public page a few seconds. */
export const publicCacheControl = `public, max-age=0, s-maxage=${sMaxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;
export const privateCacheControl = 'no-store';

export const entityTag = (body: string): string => `"${hash('sha256', body, 'base64url').slice(0, 27)}"`;

/** RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a W/ prefix is ignored). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/**
 * Cache headers of a successful response: public GETs get Cache-Control for
 * shared caches and an ETag, and a matching If-None-Match gets 304, unless
 * the handler set its own Cache-Control; protected routes get no-store.
 * Problems are left to the problem middleware.
 */
export const httpCaching = (route: Pick<HttpRoute, 'method' | 'auth' | 'cacheControl'>): HttpMiddleware => ({
  after: (request) => {
    const response = request.response;
    if (response?.statusCode !== 200) return;
    if (route.cacheControl !== undefined) {
      (response.headers ??= {})['cache-control'] = route.cacheControl;
      return;
    }
    if (route.auth !== 'none') {
      (response.headers ??= {})['cache-control'] = privateCacheControl;
      return;
    }
    if (route.method !== 'GET' || typeof response.body !== 'string') return;
    // A handler that chose its own caching (the docs page and its static files) keeps it.
    if (response.headers?.['cache-control'] !== undefined) return;
    const etag = entityTag(response.body);
    if (matchesIfNoneMatch(request.event.headers?.['if-none-match'], etag)) {
      request.response = { statusCode: 304, headers: { 'cache-control': publicCacheControl, etag } };
      return;
    }
    const headers = (response.headers ??= {});
    headers['cache-control'] = publicCacheControl;
    headers.etag = etag;
  },
});
