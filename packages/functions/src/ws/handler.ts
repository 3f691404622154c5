import middy from '@middy/core';
import { hubMetrics, publishMetrics } from '../middleware/metrics';
import { addSecurityHeaders } from '../middleware/security-headers';
import { problemDetails } from '../middleware/problem-details';
import { injectLogContext, requestLogger, type LoggedContext } from '../middleware/request-logger';
import { traceInvocation } from '../middleware/tracing';
import type { WsEvent, WsResult } from '../routes/realtime';
import { copyProcessEnvironment } from '@hatchery/platform/process-environment';

type WsContext = LoggedContext;

/** The Middy chain of the WebSocket API's three routes. */
export function wsHandler(run: (event: WsEvent, context: WsContext) => Promise<WsResult>) {
  copyProcessEnvironment();
  return (
    middy<WsEvent, WsResult, Error, WsContext>()
      .use(injectLogContext())
      .use(traceInvocation<WsEvent, WsResult, WsContext>())
      .use(publishMetrics())
      .use(hubMetrics<WsEvent, WsResult, WsContext>())
      .use(
        requestLogger<WsEvent, WsResult, WsContext>({
          message: 'websocket event',
          level: 'debug',
          fields: ({ requestContext: { requestId, routeKey, connectionId } }) => ({ requestId, route: routeKey, connectionId }),
        }),
      )
      .use(addSecurityHeaders<WsEvent, WsResult, WsContext>())
      // A failure is answered with its problem status (refusing a $connect), never thrown back at API Gateway.
      .use(problemDetails<WsEvent, WsResult, WsContext>((event) => event.requestContext.routeKey))
      .handler(run)
  );
}

/** Header lookup as API Gateway passes them on $connect: with the client's own capitalisation. */
export function header(event: WsEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
}
