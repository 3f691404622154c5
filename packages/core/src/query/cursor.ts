import { hash } from 'node:crypto';
import { validationError } from '../errors';
import { writtenAs, type FieldType, type OrderTerm } from './fields';

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

const refused = (why: string) => validationError('after', why);
const notOurs = 'is not a cursor this service wrote (use the nextCursor of the page before)';

/** A cursor as the client sent it, decoded: the walk it claims to continue and the sort key it stopped at. */
export interface Cursor {
  binding: string;
  keys: string[];
  /** Whether each key is a value of its term's type: said only once the cursor is known to be of this walk, as another walk's keys have other types. */
  keysFit: boolean;
}

/** The cursor `after` names, or a 422 naming `after` when it is not one this service wrote for an order of keys of these types. */
export function readCursor(cursor: string, types: readonly FieldType[]): Cursor {
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
  if (!Array.isArray(decoded) || decoded.length !== types.length + 1 || !decoded.every((part): part is string => typeof part === 'string'))
    throw refused(notOurs);
  const [binding, ...keys] = decoded;
  return { binding: binding!, keys, keysFit: keys.every((key, index) => writtenAs(types[index]!, key)) };
}

/** The cursor's sort key, or a 422 naming `after` when it is of another list, filter or order, or its keys of the wrong type. */
export function cursorKeys(cursor: Cursor, binding: string): string[] {
  if (cursor.binding !== binding) throw refused('belongs to another list, filter or order: a cursor continues the walk it came from');
  if (!cursor.keysFit) throw refused('holds a key of the wrong type');
  return cursor.keys;
}

/** The sort key of a page's last row read as values: its key columns are its last ones, one per term. */
export const keysOf = (values: readonly unknown[], terms: readonly OrderTerm[]): string[] => {
  const first = values.length - terms.length;
  return terms.map((_term, index) => String(values[first + index]));
};
