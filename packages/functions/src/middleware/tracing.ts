import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { startInvocationTrace } from '@hatchery/platform/telemetry/tracing';

/**
 * The invocation as an X-Ray subsegment holding its database and AWS calls,
 * when tracing is on (see core/tracing.ts). Responses are not recorded: they carry account data.
 */
export function traceInvocation<TEvent, TResult, TContext extends Context>(): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const traces = new WeakMap<object, ReturnType<typeof startInvocationTrace>>();
  return {
    before: (request) => {
      traces.set(request, startInvocationTrace());
    },
    after: (request) => traces.get(request)?.end(),
    onError: (request) => traces.get(request)?.end(request.error ?? undefined),
  };
}
