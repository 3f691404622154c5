import { describe, expect, it } from 'vitest';
import { entityTag, entityTags } from '@hatchery/functions/middleware/http-caching';

const page = (price: string) => JSON.stringify({ items: [{ tokenId: '1', price }], totalCount: 1, page: 1, pageSize: 20 });

describe('entity tags of recent URLs', () => {
  it('gives every body the tag of its own content, whether remembered or not', () => {
    const tagOf = entityTags(2);
    const first = page('100');
    expect(tagOf('/editions', first)).toBe(entityTag(first));
    // An equal body built anew (another string of the same text) takes the remembered tag, which is its own.
    expect(tagOf('/editions', page('100'))).toBe(entityTag(first));
  });

  it('never gives a changed body the tag of the one before it at the same URL', () => {
    const tagOf = entityTags(2);
    const before = tagOf('/marketplace/listings', page('100'));
    const after = tagOf('/marketplace/listings', page('101'));
    expect(after).not.toBe(before);
    expect(after).toBe(entityTag(page('101')));
    expect(tagOf('/marketplace/listings', page('100'))).toBe(before);
  });

  it('keeps URLs apart, forgets the least recent beyond its size, and tags a body too long to keep', () => {
    const tagOf = entityTags(2);
    expect(tagOf('/a', page('1'))).toBe(entityTag(page('1')));
    expect(tagOf('/b', page('2'))).toBe(entityTag(page('2')));
    expect(tagOf('/c', page('3'))).toBe(entityTag(page('3')));
    expect(tagOf('/a', page('4'))).toBe(entityTag(page('4')));
    const long = page('9'.repeat(70_000));
    expect(tagOf('/a', long)).toBe(entityTag(long));
    expect(tagOf('/a', page('4'))).toBe(entityTag(page('4')));
  });
});
