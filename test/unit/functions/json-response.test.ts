import { describe, expect, it } from 'vitest';
import { toJsonWithoutNulls } from '@hatchery/functions/middleware/json-response';

describe('toJsonWithoutNulls (null values are omitted)', () => {
  it('drops null members at any depth and keeps everything else as JSON.stringify writes it', () => {
    const value = {
      items: [
        { requestId: '5', tokenId: null, nested: { a: null, b: 0 } },
        { requestId: '6', tokenId: '7' },
      ],
      totalCount: 2,
    };
    expect(toJsonWithoutNulls(value)).toBe('{"items":[{"requestId":"5","nested":{"b":0}},{"requestId":"6","tokenId":"7"}],"totalCount":2}');
  });

  it('keeps strings that merely look like a null member', () => {
    const value = { name: 'a":null', other: '":null}' };
    expect(JSON.parse(toJsonWithoutNulls(value))).toEqual(value);
  });

  it('writes a value without nulls exactly as JSON.stringify does', () => {
    const value = { name: 'null', list: [1, 'x'], flag: false };
    expect(toJsonWithoutNulls(value)).toBe(JSON.stringify(value));
  });
});
