import type middy from '@middy/core';
import type { Context as LambdaContext } from 'aws-lambda';
import { logger, type Logger } from '@hatchery/core/logger';

export interface LoggedContext extends LambdaContext {
  log: Logger;
}

export interface RequestLoggerOptions<TEvent> {
  message: string;
  level: 'info' | 'debug';
  /** What identifies the request in every line logged while it runs (request id, route, connection id). */
  fields: (event: TEvent) => Record<string, unknown>;
}

/** Gives the request a child logger carrying its identifying fields, and logs one line with status and duration when it ends. */
export function requestLogger<TEvent, TResult extends { statusCode?: number }, TContext extends LoggedContext>(
  options: RequestLoggerOptions<TEvent>,
): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const started = new WeakMap<object, number>();
  const finish = (request: middy.Request<TEvent, TResult, Error, TContext>) => {
    const durationMs = Math.round(performance.now() - (started.get(request) ?? performance.now()));
    request.context.log[options.level]({ status: request.response?.statusCode, durationMs }, options.message);
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
      request.context.log = logger().child(options.fields(request.event));
    },
    after: finish,
    onError: finish,
  };
}
