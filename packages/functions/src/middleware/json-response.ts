import type { HttpMiddleware } from './types';

/** Null values are omitted from output (docs/http-api.md). */
const withoutNulls = (_key: string, value: unknown) => (value === null ? undefined : value);

/**
 * JSON without null members. A replacer takes V8 off its fast serializer, so
 * it runs only when the plain text may hold one: a null member always leaves
 * `":null` in it (a string holding those characters only costs the second pass).
 */
function toJsonWithoutNulls(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('":null') ? JSON.stringify(value, withoutNulls) : text;
}

interface JsonResponseOptions {
  /**
   * The handler's output holds no null by construction, so it is written as
   * it is, without the scan for one: a list's page, whose items leave a NULL
   * column out (read-model.ts) and whose envelope has no nullable member.
   */
  nullFree?: boolean;
}

/** Serializes what the handler returned as a 200 JSON response. */
export const jsonResponse = ({ nullFree = false }: JsonResponseOptions = {}): HttpMiddleware => {
  const serialize = nullFree ? (value: unknown) => JSON.stringify(value) : toJsonWithoutNulls;
  return {
    after: (request) => {
      request.response = {
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: serialize(request.response),
      };
    },
  };
};
