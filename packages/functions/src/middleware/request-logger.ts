import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type middy from '@middy/core';
import type { Context as LambdaContext } from 'aws-lambda';
import { requestState } from './request-state';
import { addLogContext, clearLogContext, logger, logsAt, powertoolsLogger, type LogContext, type Logger } from '@hatchery/platform/telemetry/logger';

/** A request at least this long logs its line at INFO like a failed one (docs/operating.md, Logs). */
const slowRequestMs = 1_000;

export interface LoggedContext extends LambdaContext {
  log: Logger;
}

interface RequestLoggerOptions<TEvent> {
  message: string;
  /** The level of a request that failed (4xx, 5xx) or was slow; every other request's line is at debug. */
  level: 'info' | 'debug';
  /** What identifies the request in every line logged while it runs (request id, route, connection id). */
  fields: (event: TEvent) => LogContext;
}

/**
 * Powertools' injectLambdaContext: every line logged during the invocation
 * carries its Lambda request id and cold start (Powertools adds the X-Ray
 * trace id); and the invocation's LogContext cleared when it ends. Outermost
 * in a chain, so that the lines of every other middleware carry them too.
 */
export const injectLogContext = <TEvent, TResult, TContext extends LambdaContext>(): middy.MiddlewareObj<TEvent, TResult, Error, TContext>[] => [
  injectLambdaContext(powertoolsLogger()),
  { after: clearLogContext, onError: clearLogContext },
];

/**
 * Puts the request's identifying fields on every line logged while it runs,
 * and logs one line with status and duration when it ends (injectLogContext,
 * outside it, clears them after the invocation's last line). The metrics
 * document already counts every request with its status and latency, so
 * only a failed or slow one has its line at `level`; the others are at debug,
 * which a sample of invocations logs (POWERTOOLS_LOGGER_SAMPLE_RATE).
 */
export function requestLogger<TEvent, TResult extends { statusCode?: number }, TContext extends LoggedContext>(
  options: RequestLoggerOptions<TEvent>,
): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const started = requestState<number>('request logger start');
  const finish = (request: middy.Request<TEvent, TResult, Error, TContext>) => {
    const durationMs = Math.round(performance.now() - (started.get(request) ?? performance.now()));
    const status = request.response?.statusCode;
    const notable = status === undefined || status >= 400 || durationMs >= slowRequestMs;
    const level = notable ? options.level : 'debug';
    if (logsAt(level)) request.context.log[level]({ status, durationMs }, options.message);
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
      // An invocation Lambda timed out never reached its end: nothing of it stays on this one's lines.
      clearLogContext();
      addLogContext(options.fields(request.event));
      request.context.log = logger();
    },
    after: finish,
    onError: finish,
  };
}
