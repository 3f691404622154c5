import { AppError, toProblem } from '@hatchery/core/errors';
import type { HttpMiddleware } from './types';

/** Turns any error into RFC 9457 problem+json; unexpected ones are logged here and never described to the client. */
export const problemDetails = (): HttpMiddleware => ({
  onError: (request) => {
    const { error, event, context } = request;
    const problem = toProblem(error, event.rawPath ?? '/');
    if (!(error instanceof AppError)) context.log?.error({ err: error }, 'request failed');
    request.response = { statusCode: problem.status, headers: problem.headers, body: JSON.stringify(problem.body) };
  },
});
