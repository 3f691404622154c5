import { hash } from 'node:crypto';
import { validationError } from '../errors';
import { limits } from '../limits';
import type { FieldType, OrderTerm, Params } from './compile';

/**
 * Keyset paging (docs/http-api.md, Paging by cursor): `nextCursor` holds the last
 * row's sort key, bound by a short hash to the list, its compiled
 * conditions and its order; `after` reads the rows strictly after it in that
 * order. A cursor is client input: it is decoded, checked against its
 * binding and each key's type, and only then reaches a statement, as
 * parameters.
 */

/** The columns a page reads beside its items: each sort key as text, the way the cursor carries it. */
export const keyColumn = (index: number) => `__k${index}`;
export const keyColumns = (terms: readonly OrderTerm[]) => terms.map((term, index) => `(${term.sql})::text AS "${keyColumn(index)}"`).join(', ');

/** What a cursor is bound to: the list, its conditions with their values, and its order. */
export function cursorBinding(list: string, where: string, values: readonly unknown[], terms: readonly OrderTerm[]): string {
  const order = terms.map((term) => `${term.sql} ${term.direction}`).join(',');
  return hash('sha256', `${list}\n${where}\n${JSON.stringify(values)}\n${order}`, 'base64url').slice(0, 12);
}

export function encodeCursor(binding: string, keys: readonly string[]): string {
  return Buffer.from(JSON.stringify([binding, ...keys]), 'utf8').toString('base64url');
}

const keyPatterns: Record<FieldType, RegExp> = {
  bigint: /^-?(0|[1-9][0-9]{0,77})$/,
  integer: /^-?(0|[1-9][0-9]{0,9})$/,
  boolean: /^(true|false)$/,
  text: /^[^\0]*$/,
};

const refused = (why: string) => validationError('after', why);
const notOurs = 'is not a cursor this service wrote (use the nextCursor of the page before)';

/** The sort key `after` names, or a 422 naming `after`: malformed, of another list, filter or order, or keys of the wrong type. */
export function decodeCursor(cursor: string, binding: string, terms: readonly OrderTerm[]): string[] {
  if (cursor.length > limits.cursorLength) throw refused(`at most ${limits.cursorLength} characters`);
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    // base64url admits several spellings of the same bytes: only the canonical one is a cursor this service wrote.
    if (Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw new Error('not canonical');
    decoded = JSON.parse(text);
  } catch {
    throw refused(notOurs);
  }
  if (!Array.isArray(decoded) || decoded.length !== terms.length + 1 || !decoded.every((part): part is string => typeof part === 'string'))
    throw refused(notOurs);
  const [bound, ...keys] = decoded;
  if (bound !== binding) throw refused('belongs to another list, filter or order: a cursor continues the walk it came from');
  keys.forEach((key, index) => {
    const term = terms[index]!;
    if (!keyPatterns[term.type].test(key) || (term.type === 'integer' && Math.abs(Number(key)) > 2 ** 31)) throw refused('holds a key of the wrong type');
  });
  return keys;
}

const casts: Record<FieldType, string> = { bigint: 'numeric', integer: 'integer', boolean: 'boolean', text: 'text' };

/**
 * The rows strictly after `keys` in the order: the expanded comparison
 * (k0 after v0) OR (k0 = v0 AND k1 after v1) OR …, each key with its own
 * direction and, for names, its collation, as ORDER BY compares them. The
 * first key's bound is repeated on its own (k0 >= v0, or <=), which
 * PostgreSQL turns into a range of that key's index.
 */
export function afterCondition(terms: readonly OrderTerm[], keys: readonly string[], params: Params): string {
  const values = keys.map((key, index) => `${params.add(key)}::${casts[terms[index]!.type]}`);
  const after = (index: number) => `${terms[index]!.sql} ${terms[index]!.direction === 'asc' ? '>' : '<'} ${values[index]}`;
  const equal = (index: number) => `${terms[index]!.sql} = ${values[index]}`;
  const branches = terms.map((_term, index) => [...terms.slice(0, index).map((_each, before) => equal(before)), after(index)].join(' AND '));
  const bound = `${terms[0]!.sql} ${terms[0]!.direction === 'asc' ? '>=' : '<='} ${values[0]}`;
  return `(${bound} AND (${branches.map((branch) => `(${branch})`).join(' OR ')}))`;
}

/** The sort key of a page's last row, read from its key columns. */
export const keysOf = (row: Record<string, unknown>, terms: readonly OrderTerm[]): string[] => terms.map((_term, index) => String(row[keyColumn(index)]));
