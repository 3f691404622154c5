import { AppError } from '@hatchery/core/errors';
import type { HttpMiddleware } from './types';

/** Request bodies above this are 413; the one JSON body the API takes (link wallet) is under 300 bytes. */
export const requestBodyBytes = 16 * 1024;

/** 413 for a request body above `requestBodyBytes`, counted in bytes as the client sent them. */
export const limitBodySize = (): HttpMiddleware => ({
  before: ({ event }) => {
    if (!event.body) return;
    const bytes = Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
    if (bytes > requestBodyBytes) {
      throw new AppError('payloadTooLarge', `The request body is ${bytes} bytes; at most ${requestBodyBytes} are accepted.`);
    }
  },
});
