import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '@hatchery/core/errors';
import { compileFilter, compileOrderBy, lookupField, Params, type FieldMap, type OrderSpec } from '@hatchery/core/query/compile';
import { GrammarError, operators, parseFilter, parseOrderBy } from '@hatchery/core/query/grammar';

const fields = {
  id: { sql: 'id_col', type: 'bigint' },
  name: { sql: 'name_col', type: 'text' },
  rarity: { sql: 'rarity_col', type: 'integer' },
  active: { sql: 'active_col', type: 'boolean' },
} as const satisfies FieldMap;

const order: OrderSpec = { defaultOrder: [{ field: 'id', direction: 'asc' }], tieBreaker: { sql: 'id_col', direction: 'asc', type: 'bigint' } };

function compile(filter: string) {
  const params = new Params();
  const sql = compileFilter(filter, fields, params)?.sql;
  return { sql, values: params.values };
}

function rejection(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a validation error');
}

describe('parseFilter', () => {
  it('reads every operator', () => {
    for (const operator of operators) {
      expect(parseFilter(`name${operator}abc`)).toEqual({ kind: 'condition', field: 'name', operator, value: 'abc', empty: false, caseInsensitive: false });
    }
  });

  it('gives "and" and "or" equal precedence, left to right, and honours parentheses', () => {
    const condition = (field: string, value: string) => ({ kind: 'condition', field, operator: '=', value, empty: false, caseInsensitive: false });
    expect(parseFilter('a=1|b=2,c=3')).toEqual({
      kind: 'and',
      left: { kind: 'or', left: condition('a', '1'), right: condition('b', '2') },
      right: condition('c', '3'),
    });
    expect(parseFilter('a=1,b=2|c=3')).toEqual({
      kind: 'or',
      left: { kind: 'and', left: condition('a', '1'), right: condition('b', '2') },
      right: condition('c', '3'),
    });
    expect(parseFilter('a=1|(b=2,c=3)')).toEqual({
      kind: 'or',
      left: condition('a', '1'),
      right: { kind: 'and', left: condition('b', '2'), right: condition('c', '3') },
    });
  });

  it('skips white space before a value and keeps it inside and after one', () => {
    expect(parseFilter(' name =\t ali reza ,b=1')).toMatchObject({ left: { field: 'name', value: 'ali reza ' } });
    expect(parseFilter('name=')).toMatchObject({ value: '', empty: true, caseInsensitive: false });
    expect(parseFilter('name=/i')).toMatchObject({ value: '', empty: true, caseInsensitive: true });
  });

  it('unescapes special characters and keeps them in the value', () => {
    expect(parseFilter('name=a\\,b\\|c\\(d\\)e\\\\f')).toMatchObject({ value: 'a,b|c(d)e\\f' });
  });

  it('reads /i as case-insensitive, and an escaped /i as text', () => {
    expect(parseFilter('name=Foo/i')).toMatchObject({ value: 'Foo', caseInsensitive: true });
    expect(parseFilter('name=Foo\\/i')).toMatchObject({ value: 'Foo/i', caseInsensitive: false });
  });

  it('drops a dangling escape at the very end, as Gridify does', () => {
    expect(parseFilter('name=abc\\')).toMatchObject({ value: 'abc' });
  });

  it.each(['', ' ', 'name', '=1', 'name~1', '(name=1', 'name=1)', 'name=a(b', 'name=1,', 'name=1|', '()', 'name==x', 'name=x/iX', '_a=1', 'a[1]=2', '(a=1)=2'])(
    'rejects %j',
    (input) => {
      expect(() => parseFilter(input)).toThrow(GrammarError);
    },
  );
});

describe('compileFilter', () => {
  it('compiles equality and comparisons to typed placeholders', () => {
    expect(compile('rarity>=3,active=true')).toEqual({ sql: '(rarity_col >= $1::integer AND active_col = $2::boolean)', values: ['3', 'true'] });
    expect(compile('Rarity = +03 ,ACTIVE=1')).toEqual({ sql: '(rarity_col = $1::integer AND active_col = $2::boolean)', values: ['3', 'true'] });
    expect(compile('id<18446744073709551617')).toEqual({ sql: 'id_col < $1::numeric', values: ['18446744073709551617'] });
    expect(compile('name!=x').sql).toBe('name_col IS DISTINCT FROM $1::text');
  });

  it('compiles text operators to LIKE patterns with LIKE metacharacters escaped', () => {
    expect(compile('name=*50%_off')).toEqual({ sql: 'name_col LIKE $1', values: ['%50\\%\\_off%'] });
    expect(compile('name!*x').sql).toBe('name_col NOT LIKE $1');
    expect(compile('name^ab').values).toEqual(['ab%']);
    expect(compile('name!^ab').sql).toBe('name_col NOT LIKE $1');
    expect(compile('name$ab').values).toEqual(['%ab']);
    expect(compile('name!$ab').sql).toBe('name_col NOT LIKE $1');
    expect(compile('name=*AB/i')).toEqual({ sql: 'name_col ILIKE $1', values: ['%AB%'] });
  });

  it('compiles case-insensitive equality by lowering both sides, and ordering by upper-casing them, ordinally', () => {
    expect(compile('name=Edition/i')).toEqual({ sql: 'lower(name_col) = lower($1::text)', values: ['Edition'] });
    expect(compile('name>=j/i')).toEqual({ sql: 'upper(name_col) COLLATE "C" >= upper($1::text)', values: ['j'] });
  });

  it('compiles null to IS NULL / IS NOT NULL with = and !=, and reads it as text otherwise', () => {
    expect(compile('name=null')).toEqual({ sql: 'name_col IS NULL', values: [] });
    expect(compile('name!=null').sql).toBe('name_col IS NOT NULL');
    expect(compile('name>null')).toEqual({ sql: 'name_col COLLATE "C" > $1::text', values: ['null'] });
  });

  it('compiles an empty value to "null or default", and refuses it for a boolean (no boolean)', () => {
    expect(compile('name=')).toEqual({ sql: '(name_col IS NULL OR name_col = $1::text)', values: [''] });
    expect(compile('rarity!=')).toEqual({ sql: '(rarity_col IS NOT NULL AND rarity_col <> $1::integer)', values: ['0'] });
    expect(() => compile('active=')).toThrow(expect.objectContaining({ kind: 'validation', fields: { filter: ["'active' takes true, false, 1 or 0"] } }));
  });

  it("reads a 32-bit field's hexadecimal forms as Int32Converter does, and no others", () => {
    expect(compile('rarity=0x1F').values).toEqual(['31']);
    expect(compile('rarity=#FFFFFFFF').values).toEqual(['-1']);
    expect(compile('rarity= &h7fffffff ').values).toEqual(['2147483647']);
    expect(compile('rarity^0xA')).toEqual({ sql: '(rarity_col)::text LIKE $1', values: ['10%'] });
    for (const value of ['0x100000000', '-0x1', '0x', '#G', '0b1']) expect(() => compile(`rarity=${value}`), value).toThrow();
    expect(() => compile('id=0x1'), 'a big integer is decimal only').toThrow();
  });

  it('compiles ^ and $ on a number to a match on its decimal text', () => {
    expect(compile('id^+02')).toEqual({ sql: '(id_col)::text LIKE $1', values: ['2%'] });
    expect(compile('rarity!$1').sql).toBe('(rarity_col)::text NOT LIKE $1');
    expect(compile('id^')).toEqual({ sql: '(id_col)::text LIKE $1', values: ['%'] });
  });

  it('resolves field names case-insensitively from own entries only', () => {
    expect(lookupField(fields, 'NAME')).toBe(fields.name);
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) expect(lookupField(fields, name)).toBeUndefined();
  });

  it('compiles nested groups', () => {
    expect(compile('(rarity=1|rarity=2),(name^a|name^b)').sql).toBe(
      '((rarity_col = $1::integer OR rarity_col = $2::integer) AND (name_col LIKE $3 OR name_col LIKE $4))',
    );
  });

  it.each([
    ['rarity=abc', 'integer'],
    ['rarity=99999999999', 'integer'],
    ['id=1.5', 'integer'],
    ['id=' + '9'.repeat(79), 'integer'],
    ['active=yes', 'true, false, 1 or 0'],
    ['active=1 ', 'true, false, 1 or 0'],
    ['active>true', "does not compare with '>'"],
    ['rarity=*1', 'does not work on the number field'],
    ['rarity=1/i', "'/i' does not work"],
    ['active=true/i', "'/i' does not work"],
    ['burned=true', 'not a filterable field'],
    ['constructor=1', 'not a filterable field'],
    ['name=(x)', "unexpected '('"],
    ['name=a\0b', 'NUL'],
  ])('rejects %j with a 422 naming filter', (filter, message) => {
    const error = rejection(() => compile(filter));
    expect(error.kind).toBe('validation');
    expect(error.fields?.filter?.[0]).toContain(message);
  });

  it('names the filterable fields when a filter names another', () => {
    expect(rejection(() => compile('burned=true')).fields?.filter).toEqual([
      `'burned' is not a filterable field; the filterable fields are ${Object.keys(fields).join(', ')}`,
    ]);
  });

  it('rejects absurd nesting instead of overflowing the stack', () => {
    expect(rejection(() => compile(`${'('.repeat(200)}name=a${')'.repeat(200)}`)).fields).toHaveProperty('filter');
  });

  it('never puts a value into the SQL text', () => {
    const attacks = [
      "name=x'; DROP TABLE indexer.editions; --",
      "name=*' OR 1=1 --",
      'name=x"; SELECT pg_sleep\\(10\\); --/i',
      'name^\\$1',
      'rarity=1,name=\\) OR \\(1=1',
    ];
    for (const attack of attacks) {
      const { sql, values } = compile(attack);
      expect(sql).not.toMatch(/DROP|OR 1=1|pg_sleep|'/);
      expect(sql).toMatch(/^[\w\s()$:=<>.!,]+$/);
      expect(values.length).toBeGreaterThan(0);
    }
    for (const attack of ['rarity=1;DROP TABLE x', 'id=1 OR 1=1', 'active=true)--', "name=x') OR ('1'='1"]) {
      expect(rejection(() => compile(attack)).fields).toHaveProperty('filter');
    }
  });

  it('throws nothing but the validation error, whatever the input (property)', () => {
    const alphabet = fc.constantFrom(...'namerityd=!<>*^$|,()\\/ 0123456789abcnull-_.\'";'.split(''));
    const inputs = fc.oneof(fc.string({ maxLength: 600 }), fc.string({ unit: alphabet, maxLength: 80 }));
    fc.assert(
      fc.property(inputs, (input) => {
        try {
          const params = new Params();
          const sql = compileFilter(input, fields, params)?.sql ?? '';
          // Whatever compiled may only reference placeholders, never input text.
          for (const value of params.values) if (typeof value === 'string' && value.length > 2) expect(sql.includes(value)).toBe(false);
        } catch (error) {
          if (!(error instanceof AppError) || error.kind !== 'validation' || !error.fields?.filter) throw error;
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('orderBy', () => {
  it('parses terms with optional direction', () => {
    expect(parseOrderBy('rarity desc, name,id asc,\tx? ')).toEqual([
      { field: 'rarity', direction: 'desc', nullCheck: false },
      { field: 'name', direction: 'asc', nullCheck: false },
      { field: 'id', direction: 'asc', nullCheck: false },
      { field: 'x', direction: 'asc', nullCheck: true },
    ]);
  });

  it('reads a term with a space as its first and last words, as Gridify does', () => {
    expect(parseOrderBy('rarity  x desc')).toEqual([{ field: 'rarity', direction: 'desc', nullCheck: false }]);
  });

  it('treats a blank orderBy as the default, matches fields case-insensitively and drops a field named twice', () => {
    expect(compileOrderBy(' ', fields, order)).toBe('id_col ASC');
    expect(compileOrderBy('Rarity desc, ID', fields, order)).toBe('rarity_col DESC, id_col ASC');
    expect(compileOrderBy('rarity, rarity desc', fields, order)).toBe('rarity_col ASC, id_col ASC');
  });

  it('appends the tie-breaker unless it is already ordered on', () => {
    expect(compileOrderBy('rarity desc', fields, order)).toBe('rarity_col DESC, id_col ASC');
    expect(compileOrderBy('id desc', fields, order)).toBe('id_col DESC');
    expect(compileOrderBy(undefined, fields, order)).toBe('id_col ASC');
  });

  it.each(['burned', 'rarity up', 'rarity DESC', 'ra-rity', 'name; DROP TABLE x', 'rarity,', '!rarity', 'rarity?', 'toString', '__proto__'])(
    'rejects %j with a 422 naming orderBy',
    (input) => {
      expect(rejection(() => compileOrderBy(input, fields, order)).fields).toHaveProperty('orderBy');
    },
  );

  it('says that the direction is lowercase (Gridify refuses DESC too), and names the sortable fields', () => {
    expect(rejection(() => compileOrderBy('rarity DESC', fields, order)).fields?.orderBy).toEqual(["term 1: the direction is lowercase, 'desc', not 'DESC'"]);
    expect(rejection(() => compileOrderBy('name, rarity Asc', fields, order)).fields?.orderBy).toEqual([
      "term 2: the direction is lowercase, 'asc', not 'Asc'",
    ]);
    expect(rejection(() => compileOrderBy('burned', fields, order)).fields?.orderBy).toEqual([
      `'burned' is not a sortable field; the sortable fields are ${Object.keys(fields).join(', ')}`,
    ]);
  });

  it('throws nothing but the validation error, whatever the input (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 250 }), (input) => {
        try {
          compileOrderBy(input, fields, order);
        } catch (error) {
          if (!(error instanceof AppError) || !error.fields?.orderBy) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
