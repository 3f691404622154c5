import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { tracer } from '@hatchery/core/tracing';

/**
 * The invocation as an X-Ray subsegment (Powertools Tracer), when tracing is
 * on. Responses are not recorded: they carry account data.
 */
export function traceInvocation<TEvent, TResult, TContext extends Context>(): middy.MiddlewareObj<TEvent, TResult, Error, TContext>[] {
    // Powertools types its middleware loosely (any event, any result); it reads neither.
  return tracer ? [captureLambdaHandler(tracer, { captureResponse: false }) as middy.MiddlewareObj<TEvent, TResult, Error, TContext>] : [];
}
