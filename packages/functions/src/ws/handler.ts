import middy from '@middy/core';
import type { Context as LambdaContext } from 'aws-lambda';
import { AppError, toProblem } from '@hatchery/core/errors';
import { logger, type Logger } from '@hatchery/core/logger';
import type { WsEvent, WsResult } from '../routes/realtime';

export interface WsContext extends LambdaContext {
  log: Logger;
}

type WsMiddleware = middy.MiddlewareObj<WsEvent, WsResult, Error, WsContext>;

/** One structured log line per WebSocket event, carrying the connection id. */
const wsLogger = (): WsMiddleware => {
  const started = new WeakMap<object, number>();
  const finish: NonNullable<WsMiddleware['after']> = (request) => {
    const durationMs = Math.round(performance.now() - (started.get(request) ?? performance.now()));
    request.context.log.debug({ status: request.response?.statusCode, durationMs }, 'websocket event');
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
      const { requestId, routeKey, connectionId } = request.event.requestContext;
      request.context.log = logger().child({ requestId, route: routeKey, connectionId });
    },
    after: finish,
    onError: finish,
  };
};

/** A failure is answered with its problem status (refusing a $connect), never thrown back at API Gateway; unexpected ones are logged. */
const wsErrors = (): WsMiddleware => ({
  onError: (request) => {
    const { error, event, context } = request;
    if (!(error instanceof AppError)) (context.log ?? logger()).error({ err: error }, 'websocket event failed');
    const problem = toProblem(error, event.requestContext.routeKey);
    request.response = { statusCode: problem.status, headers: problem.headers, body: JSON.stringify(problem.body) };
  },
});

/** The Middy chain of the WebSocket API's three routes. */
export function wsHandler(run: (event: WsEvent, context: WsContext) => Promise<WsResult>) {
  return middy<WsEvent, WsResult, Error, WsContext>().use(wsLogger()).use(wsErrors()).handler(run);
}

/** Header lookup as API Gateway passes them on $connect: with the client's own capitalisation. */
export function header(event: WsEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
}
