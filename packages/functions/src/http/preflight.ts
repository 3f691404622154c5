import middy from '@middy/core';
import { requestsSettings } from '@hatchery/platform/config/requests';
import { cameThroughRouter, originVerifyHeader } from '../origin-verify';
import { corsHeaders, preflightHeaders } from '../middleware/cors';
import { addSecurityHeaders } from '../middleware/security-headers';
import type { HttpContext, HttpEvent, HttpResult } from '../middleware/types';

/** Answers CORS preflight; an origin that is not allowed gets no CORS headers at all. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(addSecurityHeaders<HttpEvent, HttpResult, HttpContext>())
  .handler(async (event) => {
    if (!cameThroughRouter(event.headers?.[originVerifyHeader], requestsSettings().ORIGIN_VERIFY_SECRET)) return { statusCode: 403, headers: {}, body: '' };
    const headers = corsHeaders(event);
    const allowed = Object.keys(headers).length > 0;
    return { statusCode: 204, headers: allowed ? { ...headers, ...preflightHeaders } : {}, body: '' };
  });
