import { describe, expect, it } from 'vitest';
import { linkWalletBodySchema } from '@hatchery/core/accounts/wire';
import { configSchema } from '@hatchery/platform/config';
import { readSettings } from '@hatchery/platform/config/environment';
import { AppError, type FieldErrors } from '@hatchery/core/errors';
import { pageQuerySchema } from '@hatchery/core/query/page-query';
import { negotiateQuerySchema } from '@hatchery/platform/signalr/protocol';
import type { HttpEvent } from '@hatchery/functions/middleware/types';
import { validateInput, type InputSchemas } from '@hatchery/functions/middleware/validate-input';
import { addressParams } from '@hatchery/functions/schemas';

/** The fields of the 422 the input validation answers for `event`. */
function fieldErrors(schemas: InputSchemas, event: Partial<HttpEvent>): FieldErrors | undefined {
  const before = validateInput(schemas).before as (request: { event: Partial<HttpEvent>; context: object }) => void;
  try {
    before({ event, context: {} });
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return error.fields;
  }
}

// zod/mini comes without zod's English messages (core/schema.ts loads them): these are the words clients read in 422 bodies.
describe('validation messages (zod, in English)', () => {
  it('names each bad paging parameter in our words', () => {
    const query = { page: '0', pageSize: 'x', filter: 'a'.repeat(501) };
    expect(fieldErrors({ query: pageQuerySchema }, { queryStringParameters: query })).toEqual({
      page: ['must be at least 1'],
      pageSize: ['must be a whole number'],
      filter: ['at most 500 characters'],
    });
    // Digits past what a double holds are still a number too large, not an "Infinity" the client never sent.
    expect(fieldErrors({ query: pageQuerySchema }, { queryStringParameters: { page: '201', pageSize: '9'.repeat(400) } })).toEqual({
      page: ['must be at most 200'],
      pageSize: ['must be at most 100'],
    });
  });

  it("names a bad address, and a missing field or body, in zod's English", () => {
    expect(fieldErrors({ params: addressParams }, { pathParameters: { address: '0x12' } })).toEqual({ address: ['must be 0x followed by 40 hex characters'] });
    expect(fieldErrors({ body: linkWalletBodySchema }, { body: '{"address":"nope"}' })).toEqual({
      address: ['must be 0x followed by 40 hex characters'],
      signature: ['Invalid input: expected string, received undefined'],
    });
    expect(fieldErrors({ body: linkWalletBodySchema }, { body: '[1]' })).toEqual({ body: ['Invalid input: expected object, received array'] });
    expect(fieldErrors({ query: negotiateQuerySchema }, { queryStringParameters: { negotiateVersion: 'two' } })).toEqual({
      negotiateVersion: ['must be a whole number'],
    });
  });

  it('says what is wrong with the configuration', () => {
    expect(() => readSettings(configSchema, { DATABASE_URL: 'not a url', DATABASE_POOL_MAX: '1.5', LOG_LEVEL: 'loud', ORIGIN_VERIFY_SECRET: 'short' })).toThrow(
      'Invalid configuration: DATABASE_URL: Invalid URL; DATABASE_POOL_MAX: Invalid input: expected int, received number; ' +
        'LOG_LEVEL: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"; ' +
        'ORIGIN_VERIFY_SECRET: Too small: expected string to have >=16 characters',
    );
  });
});
