import { logger } from '@hatchery/core/logger';
import type { HttpMiddleware } from './types';

/** One structured log line per request, carrying API Gateway's request id. */
export const requestLogger = (): HttpMiddleware => {
  const started = new WeakMap<object, number>();
  const finish: NonNullable<HttpMiddleware['after']> = (request) => {
    const durationMs = Math.round(performance.now() - (started.get(request) ?? performance.now()));
    request.context.log.info({ status: request.response?.statusCode, durationMs }, 'request');
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
      request.context.log = logger().child({
        requestId: request.event.requestContext?.requestId,
        route: request.event.routeKey,
      });
    },
    after: finish,
    onError: finish,
  };
};
