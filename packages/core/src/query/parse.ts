import { validationError } from '../errors';
import { readCursor, type Cursor } from './cursor';
import { lookupField, maxBigIntDigits, readBoolean, readInteger, storableText, type FieldMap, type FieldSpec, type OrderSpec, type OrderTerm } from './fields';
import { GrammarError, isBlank, parseFilter, parseOrderBy, type Condition, type FilterNode, type Operator } from './grammar';

/**
 * A request read whole, before any SQL: its filter as a tree of conditions on
 * known fields with values of their types, its order as keys, and its cursor
 * decoded. compile.ts emits the SQL from it. The request's schema
 * (page-query.ts) bounds the lengths first. Every fault is a 422 naming its parameter.
 */

export type Comparison = '=' | '!=' | '<' | '>' | '<=' | '>=';

export type Predicate =
  | { kind: 'null'; field: FieldSpec; negated: boolean }
  /** `field=` / `field!=`: Gridify's "null or the type's default" ('' for text, 0). */
  | { kind: 'nullOrDefault'; field: FieldSpec; negated: boolean }
  /** `value` is of the field's type, in its canonical text; caseInsensitive is only ever true on text. */
  | { kind: 'compare'; field: FieldSpec; operator: Comparison; value: string; caseInsensitive: boolean }
  /** Contains, starts or ends with `text`: on a number, its decimal text does (Gridify's `id^2` is id.ToString().StartsWith("2")). */
  | { kind: 'match'; field: FieldSpec; at: 'anywhere' | 'start' | 'end'; text: string; negated: boolean; caseInsensitive: boolean };

export type Filter = Predicate | { kind: 'and' | 'or'; left: Filter; right: Filter };

interface ParsedFilter {
  tree: Filter;
  /** True when some condition names a field of a joined table. */
  joined: boolean;
}

/** A key of the order: a field and its direction; compile.ts gives it the collation it sorts by. */
export interface OrderKey {
  field: Pick<FieldSpec, 'sql' | 'type' | 'words'>;
  direction: OrderTerm['direction'];
}

interface ParsedPage {
  filter?: ParsedFilter;
  order: OrderKey[];
  after?: Cursor;
}

/** The names a list's filter and orderBy take, for a message that names a field they do not. */
const fieldNames = (fields: FieldMap) => Object.keys(fields).join(', ');

const comparisons = new Set<Operator>(['<', '>', '<=', '>=']);
const matchAt = { '=*': 'anywhere', '!*': 'anywhere', '^': 'start', '!^': 'start', $: 'end', '!$': 'end' } as const;
const negated = (operator: Operator) => operator.startsWith('!');

function readText(field: FieldSpec, condition: Condition): Predicate {
  const { operator, value, caseInsensitive } = condition;
  if (!storableText(value)) throw new GrammarError(`'${condition.field}': a value cannot contain a NUL character`);
  if (operator in matchAt)
    return { kind: 'match', field, at: matchAt[operator as keyof typeof matchAt], text: value, negated: negated(operator), caseInsensitive };
  return { kind: 'compare', field, operator: operator as Comparison, value, caseInsensitive };
}

function readNumber(field: FieldSpec, type: 'bigint' | 'integer', condition: Condition): Predicate {
  const { operator, caseInsensitive } = condition;
  const name = condition.field;
  if (operator === '=*' || operator === '!*') throw new GrammarError(`'${operator}' does not work on the number field '${name}'`);
  // Gridify ignores /i on comparisons and fails on it elsewhere for a number.
  if (caseInsensitive && !comparisons.has(operator)) throw new GrammarError(`'/i' does not work with '${operator}' on the number field '${name}'`);
  const at = matchAt[operator as keyof typeof matchAt];
  // `id^` is StartsWith(""): every number.
  if (at && condition.empty) return { kind: 'match', field, at, text: '', negated: negated(operator), caseInsensitive: false };
  const value = readInteger(type, condition.value);
  if (value === undefined) {
    throw new GrammarError(type === 'integer' ? `'${name}' takes a 32-bit integer` : `'${name}' takes an integer of at most ${maxBigIntDigits} digits`);
  }
  if (at) return { kind: 'match', field, at, text: value, negated: negated(operator), caseInsensitive: false };
  return { kind: 'compare', field, operator: operator as Comparison, value, caseInsensitive: false };
}

function readBooleanCondition(field: FieldSpec, condition: Condition): Predicate {
  const { operator } = condition;
  const name = condition.field;
  if (condition.caseInsensitive) throw new GrammarError(`'/i' does not work on the boolean field '${name}'`);
  if (comparisons.has(operator) || operator === '=*' || operator === '!*') throw new GrammarError(`'${name}' does not compare with '${operator}'`);
  const value = readBoolean(condition.value);
  if (value === undefined) throw new GrammarError(`'${name}' takes true, false, 1 or 0`);
  // Gridify's ^ and $ read True/False as text, and a whole word starts and ends with itself.
  const equality = operator === '=' || operator === '^' || operator === '$' ? '=' : '!=';
  return { kind: 'compare', field, operator: equality, value, caseInsensitive: false };
}

function readCondition(condition: Condition, fields: FieldMap): Predicate {
  const field = lookupField(fields, condition.field);
  if (!field) throw new GrammarError(`'${condition.field}' is not a filterable field; the filterable fields are ${fieldNames(fields)}`);
  const { operator } = condition;
  const equality = operator === '=' || operator === '!=';
  if (condition.empty && equality) {
    // Gridify's BooleanConverter refuses "" (its query then matches nothing), as it refuses `yes`: a value of the wrong type.
    if (field.type === 'boolean') throw new GrammarError(`'${condition.field}' takes true, false, 1 or 0`);
    return { kind: 'nullOrDefault', field, negated: operator === '!=' };
  }
  if (equality && condition.value === 'null') return { kind: 'null', field, negated: operator === '!=' };
  switch (field.type) {
    case 'text':
      return readText(field, condition);
    case 'bigint':
    case 'integer':
      return readNumber(field, field.type, condition);
    case 'boolean':
      return readBooleanCondition(field, condition);
  }
}

function readNode(node: FilterNode, fields: FieldMap): Filter {
  if (node.kind === 'condition') return readCondition(node, fields);
  return { kind: node.kind, left: readNode(node.left, fields), right: readNode(node.right, fields) };
}

const predicates = (filter: Filter): Predicate[] => ('field' in filter ? [filter] : [...predicates(filter.left), ...predicates(filter.right)]);

/** A client filter as a tree of typed conditions; a blank one is none (undefined). */
export function readFilter(input: string | undefined, fields: FieldMap): ParsedFilter | undefined {
  if (isBlank(input)) return undefined;
  try {
    const tree = readNode(parseFilter(input), fields);
    return { tree, joined: predicates(tree).some((predicate) => predicate.field.joined === true) };
  } catch (error) {
    if (error instanceof GrammarError) throw validationError('filter', error.message);
    throw error;
  }
}

/** orderBy's keys (a blank one is the default order's), ending in the unique tie-breaker. */
export function readOrder(input: string | undefined, fields: FieldMap, order: OrderSpec): OrderKey[] {
  let terms: ReturnType<typeof parseOrderBy> | OrderSpec['defaultOrder'];
  try {
    terms = isBlank(input) ? order.defaultOrder : parseOrderBy(input);
  } catch (error) {
    if (error instanceof GrammarError) throw validationError('orderBy', error.message);
    throw error;
  }
  const columns = new Set<string>();
  const keys: OrderKey[] = [];
  for (const term of terms) {
    const spec = lookupField(fields, term.field);
    if (!spec) throw validationError('orderBy', `'${term.field}' is not a sortable field; the sortable fields are ${fieldNames(fields)}`);
    // Every field here has a value on every row; Gridify refuses ? and ! on such fields.
    if ('nullCheck' in term && term.nullCheck) throw validationError('orderBy', `'${term.field}' is never null, so '?' and '!' do not apply`);
    // A field named again orders nothing more (LINQ's ThenBy on the same key), so it is dropped.
    if (columns.has(spec.sql)) continue;
    columns.add(spec.sql);
    keys.push({ field: spec, direction: term.direction });
  }
  const { tieBreaker } = order;
  if (!columns.has(tieBreaker.sql)) keys.push({ field: tieBreaker, direction: tieBreaker.direction });
  return keys;
}

/** The request's filter, order and cursor; filter faults come first, then the order's, then the cursor's. */
export function parsePage(fields: FieldMap, order: OrderSpec, request: { filter?: string; orderBy?: string; after?: string; page: number }): ParsedPage {
  const filter = readFilter(request.filter, fields);
  const terms = readOrder(request.orderBy, fields, order);
  if (!request.after) return { ...(filter && { filter }), order: terms };
  if (request.page !== 1) throw validationError('after', 'continues from the page before, so it takes no page other than 1');
  return {
    ...(filter && { filter }),
    order: terms,
    after: readCursor(
      request.after,
      terms.map((key) => key.field.type),
    ),
  };
}
