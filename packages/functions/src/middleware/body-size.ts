import { AppError } from '@hatchery/core/errors';
import { limits } from '@hatchery/core/limits';
import type { HttpMiddleware } from './types';

/** 413 for a request body above `limits.requestBodyBytes`, counted in bytes as the client sent them. */
export const limitBodySize = (): HttpMiddleware => ({
  before: ({ event }) => {
    if (!event.body) return;
    const bytes = Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
    if (bytes > limits.requestBodyBytes) {
      throw new AppError('payloadTooLarge', `The request body is ${bytes} bytes; at most ${limits.requestBodyBytes} are accepted.`);
    }
  },
});
