import { validationError } from '../errors';
import { limits } from '../limits';
import { GrammarError, isBlank, parseFilter, parseOrderBy, trimWhiteSpace, type Condition, type FilterNode, type Operator, type SortTerm } from './grammar';

export type FieldType = 'bigint' | 'integer' | 'boolean' | 'text';

export interface FieldSpec {
  /** A trusted SQL expression (a column); never built from input. */
  sql: string;
  type: FieldType;
  /** Read from a joined table: a count whose filter names such a field needs the joins. */
  joined?: true;
  /**
   * Text people read (a name): sorted as .NET's culture-aware comparer does,
   * which Gridify's ordering tests expect. Other text (addresses, statuses) is
   * ASCII of one case, which every collation orders alike, so its index serves.
   */
  words?: true;
}

/** The fields a client may filter and sort on, by their API name. */
export type FieldMap = Readonly<Record<string, FieldSpec>>;

/** Collects positional parameters so that no value is ever spliced into SQL text. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * Gridify matches field names case-insensitively. A Map of own entries, so
 * that `constructor` or `__proto__` are unknown fields like any other.
 */
const lookups = new WeakMap<FieldMap, Map<string, FieldSpec>>();
export function lookupField(fields: FieldMap, name: string): FieldSpec | undefined {
  let lookup = lookups.get(fields);
  if (!lookup) {
    lookup = new Map(Object.entries(fields).map(([key, spec]) => [key.toLowerCase(), spec]));
    lookups.set(fields, lookup);
  }
  // ASCII folding only: the names are ASCII, and Unicode folding would let e.g. the Kelvin sign stand for 'k'.
  return lookup.get(name.replace(/[A-Z]/g, (char) => char.toLowerCase()));
}

/** The names a list's filter and orderBy take, for a message that names a field they do not. */
const fieldNames = (fields: FieldMap) => Object.keys(fields).join(', ');

const castOf: Record<FieldType, string> = { bigint: 'numeric', integer: 'integer', boolean: 'boolean', text: 'text' };
const likeOperators = new Set<Operator>(['=*', '!*', '^', '!^', '$', '!$']);
const affixOperators = new Set<Operator>(['^', '!^', '$', '!$']);
const comparisons = new Set<Operator>(['<', '>', '<=', '>=']);
const int32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };
const maxBigIntDigits = 78;

/** Int32Converter's hexadecimal forms (`#1F`, `0x1F`, `&h1F`), read as Convert.ToInt32(digits, 16) does: 32 bits, two's complement. */
const int32Hex = /^(?:#|0[xX]|&[hH])([0-9A-Fa-f]{1,8})$/;

/**
 * .NET's integer parsing as Gridify's type converter does it: trimmed, an
 * optional sign, decimal digits; a 32-bit field also takes Int32Converter's
 * hexadecimal forms. An on-chain value (big integer) is decimal only.
 */
function integerValue(field: string, type: 'bigint' | 'integer', raw: string): string {
  const text = trimWhiteSpace(raw);
  const fault = type === 'integer' ? `'${field}' takes a 32-bit integer` : `'${field}' takes an integer of at most ${maxBigIntDigits} digits`;
  const hex = type === 'integer' ? int32Hex.exec(text) : null;
  if (hex) return String(Number.parseInt(hex[1]!, 16) | 0);
  if (!/^[+-]?[0-9]+$/.test(text)) throw new GrammarError(fault);
  const value = BigInt(text);
  const inRange = type === 'integer' ? value >= int32.min && value <= int32.max : (value < 0n ? -value : value).toString().length <= maxBigIntDigits;
  if (!inRange) throw new GrammarError(fault);
  return value.toString();
}

/** Gridify's booleans: exactly `1` or `0`, or `true`/`false` in any case with white space around. */
function booleanValue(field: string, raw: string): 'true' | 'false' {
  if (raw === '1') return 'true';
  if (raw === '0') return 'false';
  const word = trimWhiteSpace(raw).toLowerCase();
  if (word === 'true' || word === 'false') return word;
  throw new GrammarError(`'${field}' takes true, false, 1 or 0`);
}

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (char) => `\\${char}`);

function likePattern(operator: Operator, value: string): string {
  const escaped = escapeLike(value);
  if (operator === '=*' || operator === '!*') return `%${escaped}%`;
  if (operator === '^' || operator === '!^') return `${escaped}%`;
  return `%${escaped}`;
}

const negated = (operator: Operator) => operator.startsWith('!');

/** `field=` / `field!=`: Gridify's "null or the type's default" ('' for text, 0). */
function nullOrDefault(sql: string, type: Exclude<FieldType, 'boolean'>, operator: Operator, params: Params): string {
  const zero = `${params.add(type === 'text' ? '' : '0')}::${castOf[type]}`;
  return operator === '=' ? `(${sql} IS NULL OR ${sql} = ${zero})` : `(${sql} IS NOT NULL AND ${sql} <> ${zero})`;
}

function compareTo(sql: string, operator: Operator, placeholder: string): string {
  if (operator === '=') return `${sql} = ${placeholder}`;
  if (operator === '!=') return `${sql} IS DISTINCT FROM ${placeholder}`;
  return `${sql} ${operator} ${placeholder}`;
}

function compileText(sql: string, condition: Condition, params: Params): string {
  const { operator, value, caseInsensitive } = condition;
  // PostgreSQL text cannot hold NUL, so no stored value could match and the driver would fail on it.
  if (value.includes('\0')) throw new GrammarError(`'${condition.field}': a value cannot contain a NUL character`);
  if (likeOperators.has(operator)) {
    return `${sql} ${negated(operator) ? 'NOT ' : ''}${caseInsensitive ? 'ILIKE' : 'LIKE'} ${params.add(likePattern(operator, value))}`;
  }
  // Gridify lowercases both sides for = and !=, and orders with OrdinalIgnoreCase (upper case) for < > <= >=.
  const fold = comparisons.has(operator) ? 'upper' : 'lower';
  const field = caseInsensitive ? `${fold}(${sql})` : sql;
  const placeholder = caseInsensitive ? `${fold}(${params.add(value)}::text)` : `${params.add(value)}::text`;
  // Gridify compares strings ordinally; "C" is code point order, whatever collation the database was created with.
  return compareTo(comparisons.has(operator) ? `${field} COLLATE "C"` : field, operator, placeholder);
}

function compileNumber(sql: string, type: 'bigint' | 'integer', condition: Condition, params: Params): string {
  const { operator, field, caseInsensitive } = condition;
  if (operator === '=*' || operator === '!*') throw new GrammarError(`'${operator}' does not work on the number field '${field}'`);
  // Gridify ignores /i on comparisons and fails on it elsewhere for a number.
  if (caseInsensitive && !comparisons.has(operator)) throw new GrammarError(`'/i' does not work with '${operator}' on the number field '${field}'`);
  // Gridify compares the number's decimal text: `id^2` is id.ToString().StartsWith("2"), and `id^` StartsWith("").
  const affix = (text: string) => `(${sql})::text ${negated(operator) ? 'NOT ' : ''}LIKE ${params.add(likePattern(operator, text))}`;
  if (affixOperators.has(operator) && condition.empty) return affix('');
  const value = integerValue(field, type, condition.value);
  if (affixOperators.has(operator)) return affix(value);
  return compareTo(sql, operator, `${params.add(value)}::${castOf[type]}`);
}

function compileBoolean(sql: string, condition: Condition, params: Params): string {
  const { operator, field } = condition;
  if (condition.caseInsensitive) throw new GrammarError(`'/i' does not work on the boolean field '${field}'`);
  if (comparisons.has(operator) || operator === '=*' || operator === '!*') throw new GrammarError(`'${field}' does not compare with '${operator}'`);
  const value = booleanValue(field, condition.value);
  // Gridify's ^ and $ read True/False as text, and a whole word starts and ends with itself.
  const equality = operator === '=' || operator === '^' || operator === '$' ? '=' : '!=';
  return compareTo(sql, equality, `${params.add(value)}::boolean`);
}

function compileCondition(condition: Condition, fields: FieldMap, params: Params): string {
  const spec = lookupField(fields, condition.field);
  if (!spec) throw new GrammarError(`'${condition.field}' is not a filterable field; the filterable fields are ${fieldNames(fields)}`);
  const { operator } = condition;
  const equality = operator === '=' || operator === '!=';
  if (condition.empty && equality) {
    // Gridify's BooleanConverter refuses "" (its query then matches nothing), as it refuses `yes`: a value of the wrong type.
    if (spec.type === 'boolean') throw new GrammarError(`'${condition.field}' takes true, false, 1 or 0`);
    return nullOrDefault(spec.sql, spec.type, operator, params);
  }
  if (equality && condition.value === 'null') return `${spec.sql} IS ${operator === '=' ? '' : 'NOT '}NULL`;
  switch (spec.type) {
    case 'text':
      return compileText(spec.sql, condition, params);
    case 'bigint':
    case 'integer':
      return compileNumber(spec.sql, spec.type, condition, params);
    case 'boolean':
      return compileBoolean(spec.sql, condition, params);
  }
}

function compileNode(node: FilterNode, fields: FieldMap, params: Params): string {
  if (node.kind === 'condition') return compileCondition(node, fields, params);
  return `(${compileNode(node.left, fields, params)} ${node.kind === 'and' ? 'AND' : 'OR'} ${compileNode(node.right, fields, params)})`;
}

/** The conditions of a filter, for deciding whether a count needs the joins. */
function conditionsOf(node: FilterNode): Condition[] {
  return node.kind === 'condition' ? [node] : [...conditionsOf(node.left), ...conditionsOf(node.right)];
}

export interface CompiledFilter {
  /** A parameterized SQL predicate. */
  sql: string;
  /** True when some condition names a field of a joined table. */
  joined: boolean;
}

/** Compiles a client filter; a blank one is none (undefined). 422 naming `filter` on any fault. */
export function compileFilter(input: string | undefined, fields: FieldMap, params: Params): CompiledFilter | undefined {
  if (isBlank(input)) return undefined;
  if (input.length > limits.filterLength) throw validationError('filter', `at most ${limits.filterLength} characters`);
  try {
    const tree = parseFilter(input);
    const sql = compileNode(tree, fields, params);
    return { sql, joined: conditionsOf(tree).some((condition) => lookupField(fields, condition.field)?.joined === true) };
  } catch (error) {
    if (error instanceof GrammarError) throw validationError('filter', error.message);
    throw error;
  }
}

export interface OrderSpec {
  /** Used when the client gives no orderBy. */
  defaultOrder: readonly Omit<SortTerm, 'nullCheck'>[];
  /** A unique column (trusted SQL) appended to every order so pages are stable. */
  tieBreaker: { sql: string; direction: SortTerm['direction']; type: FieldType };
}

/** One key of a compiled order: the expression as ORDER BY sorts it (its collation included), its direction and type. */
export interface OrderTerm {
  sql: string;
  direction: SortTerm['direction'];
  type: FieldType;
}

export const orderBySql = (terms: readonly OrderTerm[]): string => terms.map((term) => `${term.sql} ${term.direction.toUpperCase()}`).join(', ');

/** Compiles orderBy (a blank one is the default) to an ORDER BY list ending in the unique tie-breaker. */
export function compileOrderBy(input: string | undefined, fields: FieldMap, order: OrderSpec): string {
  return orderBySql(compileOrder(input, fields, order));
}

/** orderBy's keys (a blank one is the default order's), ending in the unique tie-breaker. */
export function compileOrder(input: string | undefined, fields: FieldMap, order: OrderSpec): OrderTerm[] {
  if (!isBlank(input) && input.length > limits.orderByLength) {
    throw validationError('orderBy', `at most ${limits.orderByLength} characters`);
  }
  let terms: readonly Omit<SortTerm, 'nullCheck'>[];
  try {
    terms = isBlank(input) ? order.defaultOrder : parseOrderBy(input);
  } catch (error) {
    if (error instanceof GrammarError) throw validationError('orderBy', error.message);
    throw error;
  }
  const columns = new Set<string>();
  const keys: OrderTerm[] = [];
  for (const term of terms) {
    const spec = lookupField(fields, term.field);
    if (!spec) throw validationError('orderBy', `'${term.field}' is not a sortable field; the sortable fields are ${fieldNames(fields)}`);
    // Every field here has a value on every row; Gridify refuses ? and ! on such fields.
    if ('nullCheck' in term && term.nullCheck) throw validationError('orderBy', `'${term.field}' is never null, so '?' and '!' do not apply`);
    // A field named again orders nothing more (LINQ's ThenBy on the same key), so it is dropped.
    if (columns.has(spec.sql)) continue;
    columns.add(spec.sql);
    // und-x-icu is ICU's root collation: what .NET's culture-aware comparer uses, whatever the database's default.
    keys.push({ sql: spec.words ? `${spec.sql} COLLATE "und-x-icu"` : spec.sql, direction: term.direction, type: spec.type });
  }
  const { tieBreaker } = order;
  if (!columns.has(tieBreaker.sql)) keys.push(tieBreaker);
  return keys;
}
