import { hash } from 'node:crypto';
import { LRUCache } from '@aws-lambda-powertools/commons/utils/lru-cache';
import type { HttpRoute } from '../routes';
import type { HttpMiddleware } from './types';

/** Successful public GETs: what a shared cache (CloudFront) may serve without asking, then serve stale while it revalidates. */
export const publicCache = { sMaxAgeSeconds: 5, staleWhileRevalidateSeconds: 5 } as const;

const { sMaxAgeSeconds, staleWhileRevalidateSeconds } = publicCache;
/** Browsers revalidate every time (cheap with the ETag); shared caches keep a public page a few seconds. */
export const publicCacheControl = `public, max-age=0, s-maxage=${sMaxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;
export const privateCacheControl = 'no-store';

export const entityTag = (body: string): string => `"${hash('sha256', body, 'base64url').slice(0, 27)}"`;

/** Bodies longer than this are hashed every time rather than kept. */
const rememberedBodyChars = 64 * 1024;

/**
 * The entity tag of the last body answered at each of a few recent URLs. A
 * busy list answers the same body at the same URL until the index moves, and
 * comparing two equal strings costs a fraction of hashing one: a body equal
 * to the one remembered takes its tag, any other is hashed and remembered.
 */
export function entityTags(urls: number) {
  const last = new LRUCache<string, { body: string; etag: string }>({ maxSize: urls });
  return (url: string, body: string): string => {
    const seen = last.get(url);
    if (seen?.body === body) return seen.etag;
    const etag = entityTag(body);
    if (body.length <= rememberedBodyChars) last.add(url, { body, etag });
    return etag;
  };
}

/** RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a W/ prefix is ignored). */
function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
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
export const httpCaching = (route: Pick<HttpRoute, 'method' | 'auth' | 'cacheControl'>): HttpMiddleware => {
  const tagOf = entityTags(32);
  return {
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
      const { rawPath, rawQueryString } = request.event;
      const etag = tagOf(rawQueryString ? `${rawPath}?${rawQueryString}` : rawPath, response.body);
      if (matchesIfNoneMatch(request.event.headers?.['if-none-match'], etag)) {
        request.response = { statusCode: 304, headers: { 'cache-control': publicCacheControl, etag } };
        return;
      }
      const headers = (response.headers ??= {});
      headers['cache-control'] = publicCacheControl;
      headers.etag = etag;
    },
  };
};
