import type middy from '@middy/core';
import type { Context as LambdaContext } from 'aws-lambda';
import { addLogContext, clearLogContext, logger, type LogContext, type Logger } from '@hatchery/platform/telemetry/logger';

export interface LoggedContext extends LambdaContext {
  log: Logger;
}

export interface RequestLoggerOptions<TEvent> {
  message: string;
  level: 'info' | 'debug';
  /** What identifies the request in every line logged while it runs (request id, route, connection id). */
  fields: (event: TEvent) => LogContext;
}

/** Puts the request's identifying fields on every line logged while it runs, and logs one line with status and duration when it ends. */
export function requestLogger<TEvent, TResult extends { statusCode?: number }, TContext extends LoggedContext>(
  options: RequestLoggerOptions<TEvent>,
): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const started = new WeakMap<object, number>();
  const finish = (request: middy.Request<TEvent, TResult, Error, TContext>) => {
    const durationMs = Math.round(performance.now() - (started.get(request) ?? performance.now()));
    request.context.log[options.level]({ status: request.response?.statusCode, durationMs }, options.message);
    clearLogContext();
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
      clearLogContext();
      addLogContext(options.fields(request.event));
      request.context.log = logger();
    },
    after: finish,
    onError: finish,
  };
}
