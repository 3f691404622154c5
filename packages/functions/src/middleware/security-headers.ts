import type middy from '@middy/core';
import type { Context } from 'aws-lambda';

/** Headers every response of the service carries, whoever answers it (a handler, or the gateway itself). */
export const securityHeaders = {
  // Browsers must not guess another content type than the one declared (a JSON body rendered as HTML, say).
  'x-content-type-options': 'nosniff',
} as const;

interface WithHeaders {
  headers?: Record<string, string | number | boolean>;
}

/** Adds the service's security headers (nosniff) to every response of the chain, problems included. */
export function addSecurityHeaders<TEvent, TResult extends WithHeaders, TContext extends Context>(): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const add = (request: middy.Request<TEvent, TResult, Error, TContext>) => {
    if (request.response) Object.assign((request.response.headers ??= {}), securityHeaders);
  };
  return { after: add, onError: add };
}
