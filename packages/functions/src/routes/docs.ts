import { docsAssetCopyFiles } from '../docs-assets';
import type { HttpRoute } from '../http-route';
import { docsAssetParams } from '../schemas';

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

export const docsRoutes = { openApi, docs, docsAsset } as const satisfies Record<string, HttpRoute>;
