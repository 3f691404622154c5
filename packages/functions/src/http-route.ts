import type { ListSource } from '@hatchery/core/query/page-query';
import type { InputSchemas } from './middleware/validate-input';

/** A route of the table (routes.ts). `handler` is SST's notation: a file path from the repository root, then the export name. */
export interface HttpRoute {
  method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS' | 'ANY';
  path: string;
  handler: `packages/functions/src/${string}.handler`;
  auth: 'jwt' | 'none';
  summary: string;
  request?: InputSchemas;
  /** Problem statuses this route can answer besides 422/500/503, for the OpenAPI document. */
  problems?: readonly number[];
  /** What a success carries: JSON by default (the handler's value, serialized); HTML and anything else the handler shapes itself. */
  produces?: 'application/json' | 'text/html' | 'other';
  /** For paged lists: the read model's filter/sort fields and default order, which the OpenAPI document lists and whose field types the typed client's filter builder reads. */
  list?: Pick<ListSource, 'fields' | 'order'>;
  /** A read of the indexer's data: it takes `minBlock`, and its successes carry X-Indexed-Block, X-Safe-Block and X-Finalized-Block. */
  indexed?: true;
  /** Files the handler reads at run time; the deploy copies them beside its bundle (SST copyFiles, from the repository root). */
  copyFiles?: readonly { from: string; to: string }[];
  /** 403 for a browser page of an origin the CORS settings do not allow, rather than only leaving out the CORS headers. */
  refusesOtherOrigins?: boolean;
  /** Routes of the local developer experience; documented but not part of the product's API (docs/http-api.md). */
  internal?: boolean;
  /** false exempts the route from the per-IP rate limit (the health check, which monitors poll). */
  ipRateLimited?: false;
  /** The Cache-Control of the route's successes, instead of the public or private default (see http-caching.ts). */
  cacheControl?: string;
}
