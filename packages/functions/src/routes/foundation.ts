import { editionsSource } from '@hatchery/core/indexer/editions';
import { docsAssetCopyFiles } from '../docs-assets';
import { pageQuerySchema } from '@hatchery/core/query/page-query';
import type { HttpRoute } from '../routes';
import { docsAssetParams } from '../schemas';

export const listEditions = {
  method: 'GET',
  path: '/editions',
  handler: 'packages/functions/src/http/list-editions.handler',
  auth: 'none',
  summary: 'Editions of the catalog, paged.',
  request: { query: pageQuerySchema },
  list: editionsSource,
  indexed: true,
  /** A read of the indexer schema: its minBlock not indexed yet (409), the database unavailable (503). */
  problems: [409, 503],
} as const satisfies HttpRoute;

export const openApi = {
  method: 'GET',
  path: '/openapi.json',
  handler: 'packages/functions/src/http/openapi.handler',
  auth: 'none',
  summary: 'This OpenAPI document.',
  internal: true,
} as const satisfies HttpRoute;

export const docs = {
  method: 'GET',
  path: '/docs',
  handler: 'packages/functions/src/http/docs.handler',
  auth: 'none',
  summary: 'The API explorer (Swagger UI) over this document: every operation, with “Try it out”.',
  produces: 'text/html',
  internal: true,
} as const satisfies HttpRoute;

export const docsAsset = {
  method: 'GET',
  path: '/docs/{asset}',
  handler: 'packages/functions/src/http/docs-asset.handler',
  auth: 'none',
  summary: 'The API explorer’s own files, from the swagger-ui-dist package (no CDN).',
  request: { params: docsAssetParams },
  produces: 'other',
  internal: true,
  copyFiles: docsAssetCopyFiles,
} as const satisfies HttpRoute;

export const preflight = {
  method: 'OPTIONS',
  path: '/{proxy+}',
  handler: 'packages/functions/src/http/preflight.handler',
  auth: 'none',
  summary: 'CORS preflight for every path.',
  internal: true,
} as const satisfies HttpRoute;

export const notFound = {
  method: 'ANY',
  path: '/{proxy+}',
  handler: 'packages/functions/src/http/not-found.handler',
  auth: 'none',
  summary: 'A problem+json 404 for every path no other route serves; a path that only lacks a trailing slash’s removal is redirected (308).',
  produces: 'other',
  internal: true,
} as const satisfies HttpRoute;

export const foundationRoutes = { listEditions, openApi, docs, docsAsset, preflight, notFound } as const satisfies Record<string, HttpRoute>;
