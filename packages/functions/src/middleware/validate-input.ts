import { AppError, type FieldErrors } from '@hatchery/core/errors';
import type * as z from '@hatchery/platform/schema';
import type { HttpMiddleware } from './types';

export interface InputSchemas {
  query?: z.ZodMiniType;
  params?: z.ZodMiniType;
  body?: z.ZodMiniType;
}

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

/** Validates query, path and body with the route's zod schemas; 422 naming each bad field. */
export const validateInput = (schemas: InputSchemas): HttpMiddleware => ({
  before: (request) => {
    const { event } = request;
    request.context.input = {
      query: parse(schemas.query, event.queryStringParameters ?? {}),
      params: parse(schemas.params, event.pathParameters ?? {}),
      body: schemas.body ? parse(schemas.body, parseJsonBody(event.body, event.isBase64Encoded)) : undefined,
    };
  },
});
