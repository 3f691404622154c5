import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { startInvocationTrace } from '@hatchery/platform/telemetry/tracing';
import { requestState } from './request-state';

/**
 * The invocation as an X-Ray subsegment holding its database and AWS calls,
 * when tracing is on (see core/tracing.ts). Responses are not recorded: they carry account data.
 */
export function traceInvocation<TEvent, TResult, TContext extends Context>(): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const trace = requestState<ReturnType<typeof startInvocationTrace>>('trace');
  return {
    before: (request) => {
      trace.set(request, startInvocationTrace());
    },
    after: (request) => trace.get(request)?.end(),
    onError: (request) => trace.get(request)?.end(request.error ?? undefined),
  };
}
