import { AppError } from '@hatchery/core/errors';
import type { HttpMiddleware } from './types';

/** `application/json` and the `+json` types, with any parameters (a charset). */
const json = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/** 415 for a body whose declared content type is not JSON (or is missing), on a route that takes a JSON body. */
export const requireJsonContentType = (): HttpMiddleware => ({
  before: ({ event }) => {
    if (!event.body) return;
    const type = event.headers?.['content-type'];
    if (!type || !json.test(type.trim())) {
      throw new AppError('unsupportedMediaType', 'The request body must be JSON, sent as Content-Type: application/json.');
    }
  },
});
