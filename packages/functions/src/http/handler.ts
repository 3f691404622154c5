import middy from '@middy/core';
import { AppError } from '@hatchery/core/errors';
import type * as z from '@hatchery/platform/schema';
import { allowedOriginOnly } from '../middleware/allowed-origin';
import { limitBodySize } from '../middleware/body-size';
import { cors } from '../middleware/cors';
import { httpCaching } from '../middleware/http-caching';
import { requireJsonContentType } from '../middleware/json-content-type';
import { jsonResponse } from '../middleware/json-response';
import { publishMetrics, requestMetrics } from '../middleware/metrics';
import { addSecurityHeaders } from '../middleware/security-headers';
import { problemDetails } from '../middleware/problem-details';
import { injectLogContext, requestLogger } from '../middleware/request-logger';
import { requestOutput } from '../middleware/request-output';
import { routerOnly } from '../middleware/router-only';
import { traceInvocation } from '../middleware/tracing';
import type { HttpContext, HttpEvent, HttpMiddleware, HttpResult } from '../middleware/types';
import type { IndexedRead } from '../middleware/indexed-block';
import { validateInput } from '../middleware/validate-input';
import { copyProcessEnvironment } from '@hatchery/platform/process-environment';
import type { HttpRoute } from '../routes';

type Parsed<S> = S extends z.ZodMiniType ? z.output<S> : undefined;
type Request<R extends HttpRoute> = R['request'] extends infer I ? (I extends object ? I : {}) : {};

export interface RouteInput<R extends HttpRoute> {
  query: Parsed<Request<R> extends { query: infer Q } ? Q : undefined>;
  params: Parsed<Request<R> extends { params: infer P } ? P : undefined>;
  body: Parsed<Request<R> extends { body: infer B } ? B : undefined>;
}

/**
 * Middy's answer when the invocation nears Lambda's deadline: a 503 problem with Retry-After, through the chain
 * (logged and counted), rather than Middy's own error, which would be a 500, or Lambda's timeout, which nothing logs.
 */
const outOfTime = (): never => {
  throw new AppError('unavailable', 'The request could not be answered in time; try again shortly.');
};

/**
 * The Middy chain of every HTTP endpoint: the Lambda context on log lines, trace, metrics, log, nosniff, CORS, problem+json, cache
 * headers, JSON out; then the checks that need no identity (came through the router, origin where the route refuses
 * others, body size, JSON content type), auth when required, validated input.
 */
export function httpHandler<R extends HttpRoute, T>(
  route: R,
  run: (input: RouteInput<R>, context: HttpContext, event: HttpEvent) => Promise<T>,
  /**
   * Authentication and provisioning, for routes whose auth is 'jwt' (see protected-handler.ts); the index's
   * position and its minBlock, for the reads of the indexer's data (see indexed-read-handler.ts). Passed in, so that a bundle carries only what its route runs.
   */
  { auth = [], indexedRead }: { auth?: HttpMiddleware[]; indexedRead?: IndexedRead } = {},
) {
  if ((route.auth === 'jwt') !== auth.length > 0) {
    throw new Error(`${route.method} ${route.path}: auth '${route.auth}' needs matching middlewares`);
  }
  if (Boolean(route.indexed) !== Boolean(indexedRead)) {
    throw new Error(`${route.method} ${route.path}: a read of the indexer's data, and only one, reports the indexed block`);
  }
  copyProcessEnvironment();
  const output = requestOutput<HttpEvent, HttpResult, HttpContext>();
  const chain = middy<HttpEvent, HttpResult, Error, HttpContext>({ timeoutEarlyResponse: outOfTime })
    .use(injectLogContext())
    .use(traceInvocation<HttpEvent, HttpResult, HttpContext>())
    .use(output.release)
    .use(publishMetrics())
    .use(requestMetrics<HttpEvent, HttpResult, HttpContext>(`${route.method} ${route.path}`))
    .use(
      requestLogger<HttpEvent, HttpResult, HttpContext>({
        message: 'request',
        level: 'info',
        fields: (event) => ({ requestId: event.requestContext?.requestId, route: event.routeKey }),
      }),
    )
    .use(output.hold)
    .use(addSecurityHeaders<HttpEvent, HttpResult, HttpContext>())
    .use(cors())
    .use(problemDetails<HttpEvent, HttpResult, HttpContext>((event) => event.rawPath ?? '/'));
  // Registered before jsonResponse so that its `after` sees the serialized body (Middy runs `after`s in reverse).
  chain.use(httpCaching(route));
  // Also before jsonResponse, for the same reason; its read of the index's position is cached, so it costs a refused request nothing.
  if (indexedRead) chain.use(indexedRead.report);
  if ((route.produces ?? 'application/json') === 'application/json') chain.use(jsonResponse({ nullFree: route.list !== undefined }));
  chain.use(routerOnly());
  if (route.refusesOtherOrigins) chain.use(allowedOriginOnly());
  chain.use(limitBodySize());
  if (route.request?.body) chain.use(requireJsonContentType());
  chain.use(auth);
  chain.use(validateInput(route.request ?? {}));
  // After the input is valid: a request refused for anything else never waits for its block.
  if (indexedRead) chain.use(indexedRead.minBlock);
  return chain.handler(async (event, context) => (await run(context.input as RouteInput<R>, context, event)) as unknown as HttpResult);
}
