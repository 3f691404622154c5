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

/** `value` as `schema` reads it; what it refuses is added to `refused`. */
function parse(schema: z.ZodMiniType | undefined, value: unknown, refused: FieldErrors): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const [field, messages] of Object.entries(fieldErrors(result.error))) (refused[field] ??= []).push(...messages);
  return undefined;
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
  // Every part is read before any refusal, so that the 422 names each bad field, whichever part holds it.
  const parseAll = (event: HttpEvent): RequestInput => {
    const refused: FieldErrors = {};
    const input = {
      query: parse(schemas.query, event.queryStringParameters ?? {}, refused),
      params: parse(schemas.params, event.pathParameters ?? {}, refused),
      body: schemas.body ? parse(schemas.body, parseJsonBody(event.body, event.isBase64Encoded), refused) : undefined,
    };
    if (Object.keys(refused).length > 0) throw new AppError('validation', 'One or more fields are invalid.', refused);
    return input;
  };
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
