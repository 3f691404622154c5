import type middy from '@middy/core';
import { AppError, toProblem } from '@hatchery/core/errors';
import { logger } from '@hatchery/platform/telemetry/logger';
import type { LoggedContext } from './request-logger';

interface StructuredResult {
  statusCode?: number;
  headers?: Record<string, string | number | boolean>;
  body?: string;
}

/**
 * Turns any error into RFC 9457 problem+json; unexpected ones are logged here
 * and never described to the client. `instance` names what failed (the path,
 * or the WebSocket route).
 */
export function problemDetails<TEvent, TResult extends StructuredResult, TContext extends LoggedContext>(
  instance: (event: TEvent) => string,
): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  return {
    onError: (request) => {
      const { error, event, context } = request;
      if (!(error instanceof AppError)) (context.log ?? logger()).error({ err: error }, 'request failed');
      const problem = toProblem(error, instance(event));
      request.response = { statusCode: problem.status, headers: problem.headers, body: JSON.stringify(problem.body) } as TResult;
    },
  };
}
