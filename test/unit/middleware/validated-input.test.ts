import { describe, expect, it } from 'vitest';
import { linkWalletBodySchema } from '@hatchery/core/accounts/wire';
import { AppError, toProblem } from '@hatchery/core/errors';
import { pageQuerySchema } from '@hatchery/core/query/page-query';
import type { HttpEvent, RequestInput } from '@hatchery/functions/middleware/types';
import { validateInput, type InputSchemas } from '@hatchery/functions/middleware/validate-input';
import { addressParams } from '@hatchery/functions/schemas';

type Before = (request: { event: Partial<HttpEvent>; context: { input?: RequestInput } }) => void;

/** One instance's middleware, as a function of the event: the input it hands the handler. */
function validator(schemas: InputSchemas) {
  const before = validateInput(schemas).before as Before;
  return (event: Partial<HttpEvent>): RequestInput => {
    const context: { input?: RequestInput } = {};
    before({ event, context });
    return context.input!;
  };
}

const listRoute = { query: pageQuerySchema, params: addressParams };
const wallet = '0x00000000000000000000000000000000000000AB';

describe('validated input', () => {
  it('hands the same parameters the same input, frozen through, parsed once', () => {
    const validate = validator(listRoute);
    const event = { queryStringParameters: { page: '2', filter: 'price>1' }, pathParameters: { address: wallet } };
    const first = validate(event);
    expect(first.query).toMatchObject({ page: 2, pageSize: 20, filter: 'price>1' });
    expect(validate({ queryStringParameters: { page: '2', filter: 'price>1' }, pathParameters: { address: wallet } })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.query)).toBe(true);
    expect(() => {
      (first.query as { page: number }).page = 3;
    }).toThrow(TypeError);
  });

  it('never hands one request the input of other parameters', () => {
    const validate = validator(listRoute);
    const params = { address: wallet };
    const inputs = [
      { queryStringParameters: { filter: 'a,b' }, pathParameters: params },
      { queryStringParameters: { filter: 'a', orderBy: 'b' }, pathParameters: params },
      { queryStringParameters: { filter: 'a"],["b' }, pathParameters: params },
      { queryStringParameters: undefined, pathParameters: params },
      { queryStringParameters: {}, pathParameters: { address: wallet.toLowerCase().replace('ab', 'cd') } },
    ].map(validate);
    const paging = { page: 1, pageSize: 20 };
    expect(inputs.map(({ query }) => query)).toEqual([
      { ...paging, filter: 'a,b' },
      { ...paging, filter: 'a', orderBy: 'b' },
      { ...paging, filter: 'a"],["b' },
      paging,
      paging,
    ]);
    expect(inputs[4]!.params).not.toEqual(inputs[3]!.params);
  });

  it('refuses bad parameters every time, and keeps none of them', () => {
    const validate = validator(listRoute);
    const bad = { queryStringParameters: { page: '0' }, pathParameters: { address: wallet } };
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(() => validate(bad)).toThrow(AppError);
    }
    expect(validate({ queryStringParameters: { page: '1' }, pathParameters: { address: wallet } }).query).toMatchObject({ page: 1 });
  });

  it('parses a body anew on every request', () => {
    const validate = validator({ body: linkWalletBodySchema });
    const body = JSON.stringify({ address: wallet, signature: `0x${'1'.repeat(130)}` });
    const first = validate({ body });
    const second = validate({ body });
    expect(second.body).toEqual(first.body);
    expect(second).not.toBe(first);
  });

  it('answers a 422 problem naming every bad field of query and path at once, each with its messages', () => {
    const validate = validator(listRoute);
    const error = (() => {
      try {
        validate({ queryStringParameters: { page: '0', pageSize: '101' }, pathParameters: { address: '0x12' } });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(AppError);
    expect(toProblem(error, '/accounts/0x12/nfts')).toEqual({
      status: 422,
      headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
      body: {
        title: 'Validation failed',
        status: 422,
        detail: 'One or more fields are invalid.',
        instance: '/accounts/0x12/nfts',
        errors: { page: ['must be at least 1'], pageSize: ['must be at most 100'], address: ['must be 0x followed by 40 hex characters'] },
      },
    });
  });

  it('refuses a body that is not JSON as a 422 on `body`, and reads a base64 one as the text it encodes', () => {
    const validate = validator({ body: linkWalletBodySchema });
    expect(() => validate({ body: '{"address":' })).toThrow(expect.objectContaining({ kind: 'validation', fields: { body: ['must be valid JSON'] } }));
    const body = { address: wallet, signature: `0x${'1'.repeat(130)}` };
    expect(validate({ body: Buffer.from(JSON.stringify(body)).toString('base64'), isBase64Encoded: true }).body).toEqual(body);
  });
});
