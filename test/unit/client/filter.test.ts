import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editionsSource } from '@hatchery/core/indexer/editions';
import { listingsSource } from '@hatchery/core/indexer/listings';
import { compileFilter, compileOrderBy, Params, type FieldMap } from '@hatchery/core/query/compile';
import { parseFilter } from '@hatchery/core/query/grammar';
import { and, escapeValue, filter, or } from '../../../packages/client/src/index';
import { filterText, orderText, type FieldsOf } from '../../../packages/client/src/filter';

/** The server's compilation of a filter: SQL text and parameters. */
function compiled(text: string, fields: FieldMap) {
  const params = new Params();
  return { sql: compileFilter(text, fields, params), values: params.values };
}

const conditionValueOf = (text: string) => {
  const node = parseFilter(text);
  if (node.kind !== 'condition') throw new Error(`'${text}' parsed as a ${node.kind}`);
  return node.value;
};

describe('escaping, against the server parser', () => {
  it.each([
    ['a,b', 'a\\,b'],
    ['a|b', 'a\\|b'],
    ['(a)', '\\(a\\)'],
    ['a\\b', 'a\\\\b'],
    ['x/i', 'x\\/i'],
    ['/i', '\\/i'],
    ['=x', '\\=x'],
    ['*x', '\\*x'],
    ['<x', '\\<x'],
    ['!x', '\\!x'],
    ['^x', '\\^x'],
    ['$x', '\\$x'],
    [' x', '\\ x'],
    ['a=b<c', 'a=b<c'],
    ['Edition 7', 'Edition 7'],
  ])('%j is written %j and read back whole', (value, escaped) => {
    expect(escapeValue(value)).toBe(escaped);
    expect(conditionValueOf(`name=${escapeValue(value)}`)).toBe(value);
  });

  it('reads back any value the builder writes, after every operator', () => {
    const operators = ['eq', 'ne', 'contains', 'notContains', 'startsWith', 'notStartsWith', 'endsWith', 'notEndsWith', 'lt', 'gte'] as const;
    // The bare word null is Gridify's null, and an empty value its "null or default": neither is a text value to escape.
    const value = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((text) => text !== 'null');
    fc.assert(
      fc.property(value, fc.constantFrom(...operators), fc.boolean(), (text, operator, ignoreCase) => {
        const built = filter.editions.name[operator](text, operator === 'lt' || operator === 'gte' ? undefined : { ignoreCase });
        const node = parseFilter(built.text);
        expect(node).toMatchObject({ kind: 'condition', field: 'name', value: text });
      }),
      { numRuns: 2_000 },
    );
  });

  it('compiles to what the hand-written string compiles to', () => {
    const fields = listingsSource.fields;
    const f = filter.listings;
    const cases: [built: string, handWritten: string][] = [
      [f.price.gte(10n ** 18n).text, 'price>=1000000000000000000'],
      [f.rarity.eq(3).and(f.editionName.contains('Ed(1)', { ignoreCase: true })).text, 'rarity=3,editionName=*Ed\\(1\\)/i'],
      // `,` and `|` bind equally in Gridify: the builder's parentheses keep each group's meaning under either precedence.
      [and(f.rarity.eq(1), or(f.gender.eq(0), f.gender.eq(1))).text, 'rarity=1,(gender=0|gender=1)'],
      [or(f.rarity.eq(1), and(f.gender.eq(0), f.price.lt('5'))).text, 'rarity=1|(gender=0,price<5)'],
      [or(f.seller.startsWith('0xab'), f.seller.endsWith('|ff')).and(f.status.ne('Sold')).text, '(seller^0xab|seller$\\|ff),status!=Sold'],
    ];
    for (const [built, handWritten] of cases) {
      expect(built).toBe(handWritten);
      expect(compiled(built, fields)).toEqual(compiled(handWritten, fields));
    }
  });

  it('writes sort terms the server reads', () => {
    const order = orderText<FieldsOf<'listEditions'>>((e) => [e.rarity.desc(), e.name.asc()]);
    expect(order).toBe('rarity desc,name asc');
    expect(compileOrderBy(order, editionsSource.fields, editionsSource.order)).toBe(
      compileOrderBy('rarity desc, name asc', editionsSource.fields, editionsSource.order),
    );
  });

  it('keeps raw strings, and refuses numbers that would print in exponent form', () => {
    expect(filterText('rarity=1|rarity=2')).toBe('rarity=1|rarity=2');
    expect(() => filter.editions.rarity.eq(1e21)).toThrow(RangeError);
  });
});

describe('types of the builder (checked by tsc in npm test)', () => {
  it('offers each field the operators of its type only', () => {
    expect(filter.nfts.staked.eq(true).text).toBe('staked=true');
    // @ts-expect-error a boolean field takes a boolean
    filter.nfts.staked.eq('yes');
    // @ts-expect-error a boolean field has no ordering
    void filter.nfts.staked.lt;
    // @ts-expect-error contains is for text fields
    void filter.nfts.tokenId.contains;
    // @ts-expect-error price is a listing's field, not an NFT's
    void filter.nfts.price;
    // @ts-expect-error an integer field takes a number
    filter.editions.rarity.eq('3');
  });
});
