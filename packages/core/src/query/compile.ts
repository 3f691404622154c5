import { validationError } from '../errors';
import { limits } from '../limits';
import { GrammarError, parseFilter, parseOrderBy, type Condition, type FilterNode, type Operator, type SortTerm } from './grammar';

export type FieldType = 'bigint' | 'integer' | 'boolean' | 'text';

export interface FieldSpec {
  /** A trusted SQL expression (a column); never built from input. */
  sql: string;
  type: FieldType;
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

const castOf: Record<FieldType, string> = { bigint: 'numeric', integer: 'integer', boolean: 'boolean', text: 'text' };
const textOnly = new Set<Operator>(['=*', '!*', '^', '!^', '$', '!$']);
const comparisons: Partial<Record<Operator, string>> = { '<': '<', '>': '>', '<=': '<=', '>=': '>=' };
const int32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

function typedValue(field: string, type: FieldType, raw: string): string {
  switch (type) {
    case 'bigint':
      if (!/^-?[0-9]{1,78}$/.test(raw)) throw new GrammarError(`'${field}' takes an integer of at most 78 digits`);
      return raw;
    case 'integer': {
      if (!/^-?[0-9]{1,10}$/.test(raw) || Number(raw) < int32.min || Number(raw) > int32.max) {
        throw new GrammarError(`'${field}' takes a 32-bit integer`);
      }
      return raw;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new GrammarError(`'${field}' takes true or false`);
      return raw;
    case 'text':
      return raw;
  }
}

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (char) => `\\${char}`);

function likePattern(operator: Operator, value: string): string {
  const escaped = escapeLike(value);
  if (operator === '=*' || operator === '!*') return `%${escaped}%`;
  if (operator === '^' || operator === '!^') return `${escaped}%`;
  return `%${escaped}`;
}

function compileCondition(condition: Condition, fields: FieldMap, params: Params): string {
  const spec = fields[condition.field];
  if (!spec) throw new GrammarError(`'${condition.field}' is not a filterable field`);
  const { operator } = condition;
  if (condition.value === null) {
    if (operator === '=') return `${spec.sql} IS NULL`;
    if (operator === '!=') return `${spec.sql} IS NOT NULL`;
    throw new GrammarError(`'null' only works with = and !=`);
  }
  if (textOnly.has(operator)) {
    if (spec.type !== 'text') throw new GrammarError(`'${operator}' only works on text fields, not '${condition.field}'`);
    const negate = operator.startsWith('!') ? 'NOT ' : '';
    const like = condition.caseInsensitive ? 'ILIKE' : 'LIKE';
    return `${spec.sql} ${negate}${like} ${params.add(likePattern(operator, condition.value))}`;
  }
  if (condition.caseInsensitive && spec.type !== 'text') throw new GrammarError(`'/i' only works on text fields`);
  if (spec.type === 'boolean' && operator !== '=' && operator !== '!=') {
    throw new GrammarError(`'${condition.field}' only compares with = and !=`);
  }
  const value = typedValue(condition.field, spec.type, condition.value);
  const column = condition.caseInsensitive ? `lower(${spec.sql})` : spec.sql;
  const placeholder = `${params.add(condition.caseInsensitive ? value.toLowerCase() : value)}::${castOf[spec.type]}`;
  if (operator === '=') return `${column} = ${placeholder}`;
  if (operator === '!=') return `${column} IS DISTINCT FROM ${placeholder}`;
  return `${column} ${comparisons[operator]!} ${placeholder}`;
}

function compileNode(node: FilterNode, fields: FieldMap, params: Params): string {
  if (node.kind === 'condition') return compileCondition(node, fields, params);
  const joiner = node.kind === 'and' ? ' AND ' : ' OR ';
  return `(${node.operands.map((operand) => compileNode(operand, fields, params)).join(joiner)})`;
}

/** Compiles a client filter to a parameterized SQL predicate; 422 naming `filter` on any fault. */
export function compileFilter(input: string, fields: FieldMap, params: Params): string {
  if (input.length > limits.filterLength) throw validationError('filter', `at most ${limits.filterLength} characters`);
  try {
    return compileNode(parseFilter(input), fields, params);
  } catch (error) {
    if (error instanceof GrammarError) throw validationError('filter', error.message);
    throw error;
  }
}

export interface OrderSpec {
  /** Used when the client gives no orderBy. */
  defaultOrder: readonly SortTerm[];
  /** A unique column (trusted SQL) appended to every order so pages are stable. */
  tieBreaker: { sql: string; direction: SortTerm['direction'] };
}

/** Compiles orderBy (or the default) to an ORDER BY list ending in the unique tie-breaker. */
export function compileOrderBy(input: string | undefined, fields: FieldMap, order: OrderSpec): string {
  if (input !== undefined && input.length > limits.orderByLength) {
    throw validationError('orderBy', `at most ${limits.orderByLength} characters`);
  }
  let terms: readonly SortTerm[];
  try {
    terms = input === undefined ? order.defaultOrder : parseOrderBy(input);
  } catch (error) {
    if (error instanceof GrammarError) throw validationError('orderBy', error.message);
    throw error;
  }
  const columns = new Set<string>();
  const sql = terms.map((term) => {
    const spec = fields[term.field];
    if (!spec) throw validationError('orderBy', `'${term.field}' is not a sortable field`);
    if (columns.has(spec.sql)) throw validationError('orderBy', `'${term.field}' appears twice`);
    columns.add(spec.sql);
    return `${spec.sql} ${term.direction.toUpperCase()}`;
  });
  const { tieBreaker } = order;
  if (!columns.has(tieBreaker.sql)) sql.push(`${tieBreaker.sql} ${tieBreaker.direction.toUpperCase()}`);
  return sql.join(', ');
}
