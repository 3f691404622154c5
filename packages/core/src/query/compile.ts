import type { FieldMap, FieldSpec, FieldType, OrderSpec, OrderTerm } from './fields';
import { readFilter, readOrder, type Comparison, type Filter, type OrderKey, type Predicate } from './parse';

export { lookupField, type FieldMap, type FieldSpec, type FieldType, type OrderSpec } from './fields';

/**
 * The SQL of a parsed request (parse.ts): its filter as a predicate, its
 * order as an ORDER BY list, its cursor as the condition of the rows after
 * it. Every value is a parameter, cast to its field's type.
 */

/** Collects positional parameters so that no value is ever spliced into SQL text. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const sqlType: Record<FieldType, string> = { bigint: 'numeric', integer: 'integer', boolean: 'boolean', text: 'text' };
const typed = (params: Params, value: string, type: FieldType) => `${params.add(value)}::${sqlType[type]}`;

const ordering = (operator: Comparison) => operator !== '=' && operator !== '!=';

function compareTo(sql: string, operator: Comparison, placeholder: string): string {
  if (operator === '=') return `${sql} = ${placeholder}`;
  if (operator === '!=') return `${sql} IS DISTINCT FROM ${placeholder}`;
  return `${sql} ${operator} ${placeholder}`;
}

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (char) => `\\${char}`);
const likePatterns = { anywhere: (text: string) => `%${text}%`, start: (text: string) => `${text}%`, end: (text: string) => `%${text}` };

function textComparison({ sql }: FieldSpec, operator: Comparison, value: string, caseInsensitive: boolean, params: Params): string {
  // Gridify lowercases both sides for = and !=, and orders with OrdinalIgnoreCase (upper case) for < > <= >=.
  const fold = ordering(operator) ? 'upper' : 'lower';
  const field = caseInsensitive ? `${fold}(${sql})` : sql;
  const placeholder = caseInsensitive ? `${fold}(${typed(params, value, 'text')})` : typed(params, value, 'text');
  // Gridify compares strings ordinally; "C" is code point order, whatever collation the database was created with.
  return compareTo(ordering(operator) ? `${field} COLLATE "C"` : field, operator, placeholder);
}

function predicateSql(predicate: Predicate, params: Params): string {
  const { sql, type } = predicate.field;
  switch (predicate.kind) {
    case 'null':
      return `${sql} IS ${predicate.negated ? 'NOT ' : ''}NULL`;
    case 'nullOrDefault': {
      const zero = typed(params, type === 'text' ? '' : '0', type);
      return predicate.negated ? `(${sql} IS NOT NULL AND ${sql} <> ${zero})` : `(${sql} IS NULL OR ${sql} = ${zero})`;
    }
    case 'compare':
      if (type === 'text') return textComparison(predicate.field, predicate.operator, predicate.value, predicate.caseInsensitive, params);
      return compareTo(sql, predicate.operator, typed(params, predicate.value, type));
    case 'match': {
      const subject = type === 'text' ? sql : `(${sql})::text`;
      const like = predicate.caseInsensitive ? 'ILIKE' : 'LIKE';
      return `${subject} ${predicate.negated ? 'NOT ' : ''}${like} ${params.add(likePatterns[predicate.at](escapeLike(predicate.text)))}`;
    }
  }
}

/** A parsed filter as a parameterized SQL predicate. */
export function filterSql(filter: Filter, params: Params): string {
  if ('field' in filter) return predicateSql(filter, params);
  return `(${filterSql(filter.left, params)} ${filter.kind === 'and' ? 'AND' : 'OR'} ${filterSql(filter.right, params)})`;
}

/** The order's keys as ORDER BY sorts them. */
export const orderTerms = (keys: readonly OrderKey[]): OrderTerm[] =>
  keys.map(({ field, direction }) => ({
    // und-x-icu is ICU's root collation: what .NET's culture-aware comparer uses, whatever the database's default.
    sql: field.words ? `${field.sql} COLLATE "und-x-icu"` : field.sql,
    direction,
    type: field.type,
  }));

export const orderBySql = (terms: readonly OrderTerm[]): string => terms.map((term) => `${term.sql} ${term.direction.toUpperCase()}`).join(', ');

/**
 * The rows strictly after `keys` in the order: the expanded comparison
 * (k0 after v0) OR (k0 = v0 AND k1 after v1) OR …, each key with its own
 * direction and, for names, its collation, as ORDER BY compares them. The
 * first key's bound is repeated on its own (k0 >= v0, or <=), which
 * PostgreSQL turns into a range of that key's index.
 */
export function afterCondition(terms: readonly OrderTerm[], keys: readonly string[], params: Params): string {
  const values = keys.map((key, index) => typed(params, key, terms[index]!.type));
  const after = (index: number) => `${terms[index]!.sql} ${terms[index]!.direction === 'asc' ? '>' : '<'} ${values[index]}`;
  const equal = (index: number) => `${terms[index]!.sql} = ${values[index]}`;
  const branches = terms.map((_term, index) => [...terms.slice(0, index).map((_each, before) => equal(before)), after(index)].join(' AND '));
  const bound = `${terms[0]!.sql} ${terms[0]!.direction === 'asc' ? '>=' : '<='} ${values[0]}`;
  return `(${bound} AND (${branches.map((branch) => `(${branch})`).join(' OR ')}))`;
}

interface CompiledFilter {
  /** A parameterized SQL predicate. */
  sql: string;
  /** True when some condition names a field of a joined table. */
  joined: boolean;
}

/** Compiles a client filter; a blank one is none (undefined). 422 naming `filter` on any fault. */
export function compileFilter(input: string | undefined, fields: FieldMap, params: Params): CompiledFilter | undefined {
  const filter = readFilter(input, fields);
  return filter && { sql: filterSql(filter.tree, params), joined: filter.joined };
}

/** Compiles orderBy (a blank one is the default) to an ORDER BY list ending in the unique tie-breaker. */
export function compileOrderBy(input: string | undefined, fields: FieldMap, order: OrderSpec): string {
  return orderBySql(orderTerms(readOrder(input, fields, order)));
}
