import type { HttpMiddleware } from './types';

/** SPEC.md: null values are omitted from output. */
export const withoutNulls = (_key: string, value: unknown) => (value === null ? undefined : value);

/** Serializes what the handler returned as a 200 JSON response. */
export const jsonResponse = (): HttpMiddleware => ({
  after: (request) => {
    request.response = {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request.response, withoutNulls),
    };
  },
});
