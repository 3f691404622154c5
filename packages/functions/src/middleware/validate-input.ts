import { LRUCache } from '@aws-lambda-powertools/commons/utils/lru-cache';
import { AppError, type FieldErrors } from '@hatchery/core/errors';
import type * as z from '@hatchery/platform/schema';
import type { HttpEvent, HttpMiddleware, RequestInput } from './types';

export interface InputSchemas {
  query?: z.ZodMiniType;
  params?: z.ZodMiniType;
  body?: z.ZodMiniType;
}

/** Valid inputs of a bodiless route kept per instance, by query and path parameters. */
const keptInputsPerRoute = 256;

function fieldErrors(error: z.core.$ZodError): FieldErrors {
  const fields: FieldErrors = {};
  for (const fault of error.issues) {
    const field = fault.path.length ? fault.path.join('.') : 'body';
    (fields[field] ??= []).push(fault.message);
  }
  return fields;
}

function parseJsonBody(raw: string | undefined, isBase64Encoded: boolean | undefined): unknown {
  if (raw === undefined || raw === '') return undefined;
  const text = isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('validation', 'The request body is not valid JSON.', { body: ['must be valid JSON'] });
  }
}

function parse(schema: z.ZodMiniType | undefined, value: unknown): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError('validation', 'One or more fields are invalid.', fieldErrors(result.error));
  }
  return result.data;
}

/** Frozen through, so that no request can change what the next one with the same parameters is handed. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/**
 * Validates query, path and body with the route's zod schemas; 422 naming each bad field. A route without a body
 * parses the same parameters to the same input every time, and a busy one sees the same few again and again: its
 * valid inputs are kept, frozen, in a small bounded memo (a refused one is parsed each time, and never kept).
 */
export const validateInput = (schemas: InputSchemas): HttpMiddleware => {
  const parseAll = (event: HttpEvent): RequestInput => ({
    query: parse(schemas.query, event.queryStringParameters ?? {}),
    params: parse(schemas.params, event.pathParameters ?? {}),
    body: schemas.body ? parse(schemas.body, parseJsonBody(event.body, event.isBase64Encoded)) : undefined,
  });
  if (schemas.body) return { before: (request) => void (request.context.input = parseAll(request.event)) };
  const kept = new LRUCache<string, RequestInput>({ maxSize: keptInputsPerRoute });
  return {
    before: (request) => {
      const { event } = request;
      // JSON, so that no parameter's text (a separator in a filter) can make two requests' keys alike.
      const key = JSON.stringify([event.queryStringParameters ?? null, event.pathParameters ?? null]);
      let input = kept.get(key);
      if (!input) kept.add(key, (input = deepFreeze(parseAll(event))));
      request.context.input = input;
    },
  };
};
