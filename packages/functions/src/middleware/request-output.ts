import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { holdLines, releaseLines } from '@hatchery/platform/stdout';

/**
 * The lines a request writes as it ends (its log line, its metrics) leave
 * together, in one write: `hold` goes inside the middlewares that write them,
 * so that its `after` runs before theirs, and `release` outside them.
 */
export function requestOutput<TEvent, TResult, TContext extends Context>(): {
  hold: middy.MiddlewareObj<TEvent, TResult, Error, TContext>;
  release: middy.MiddlewareObj<TEvent, TResult, Error, TContext>;
} {
  return {
    hold: { after: holdLines, onError: holdLines },
    release: { after: releaseLines, onError: releaseLines },
  };
}
