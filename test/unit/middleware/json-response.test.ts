import { describe, expect, it } from 'vitest';
import { jsonResponse } from '@hatchery/functions/middleware/json-response';

type Request = Parameters<NonNullable<ReturnType<typeof jsonResponse>['after']>>[0];

/** The body jsonResponse writes for what a handler returned. */
function bodyFor(value: unknown, options?: Parameters<typeof jsonResponse>[0]): string {
  const request = { response: value } as unknown as Request;
  void jsonResponse(options).after!(request);
  return (request.response as { body: string }).body;
}

describe('the JSON response (null values are omitted)', () => {
  it('drops null members at any depth and keeps everything else as JSON.stringify writes it', () => {
    const value = {
      items: [
        { requestId: '5', tokenId: null, nested: { a: null, b: 0 } },
        { requestId: '6', tokenId: '7' },
      ],
      totalCount: 2,
    };
    expect(bodyFor(value)).toBe('{"items":[{"requestId":"5","nested":{"b":0}},{"requestId":"6","tokenId":"7"}],"totalCount":2}');
  });

  it('keeps strings that merely look like a null member', () => {
    const value = { name: 'a":null', other: '":null}' };
    expect(JSON.parse(bodyFor(value))).toEqual(value);
  });

  it('writes a value without nulls exactly as JSON.stringify does', () => {
    const value = { name: 'null', list: [1, 'x'], flag: false };
    expect(bodyFor(value)).toBe(JSON.stringify(value));
  });

  it('writes an output declared null-free (a list page) as JSON.stringify does, with no scan', () => {
    const page = { items: [{ tokenId: '1', attributes: { health: 3 } }], totalCount: 1, page: 1, pageSize: 20 };
    expect(bodyFor(page, { nullFree: true })).toBe(JSON.stringify(page));
  });
});
