import type { FieldType } from './route-types.js';
import type { RouteName, RouteTable } from './routes.js';

/** A read model's filter and sort fields by name, each with its type. */
export type FieldTypes = Readonly<Record<string, FieldType>>;

/** The routes that take `filter` and `orderBy`: those whose table entry names a read model's fields. */
export type ListRouteName = { [K in RouteName]: RouteTable[K] extends { fields: FieldTypes } ? K : never }[RouteName];
export type FieldsOf<K extends ListRouteName> = RouteTable[K] extends { fields: infer F extends FieldTypes } ? F : never;

/** A filter for one read model's fields; `F` keeps one endpoint's filter out of another's call. */
export interface Filter<F extends FieldTypes = FieldTypes> {
  /** The Gridify expression, escaped. */
  readonly text: string;
  /** Set on a compound expression: how it joins its parts. */
  readonly joiner?: ',' | '|';
  and(...others: Filter<F>[]): Filter<F>;
  or(...others: Filter<F>[]): Filter<F>;
  /** Only for the type checker: `F` in both positions makes filters of different endpoints incompatible. */
  readonly fields?: (fields: F) => F;
}

export interface Sort<F extends FieldTypes = FieldTypes> {
  readonly text: string;
  readonly fields?: (fields: F) => F;
}

type ValueOf<T extends FieldType> = T extends 'bigint' ? string | bigint : T extends 'integer' ? number : T extends 'boolean' ? boolean : string;

interface TextOptions {
  /** Gridify's `/i`. */
  ignoreCase?: boolean;
}

interface Sortable<F extends FieldTypes> {
  asc(): Sort<F>;
  desc(): Sort<F>;
}
interface Equality<F extends FieldTypes, V> {
  eq(value: V): Filter<F>;
  ne(value: V): Filter<F>;
}
interface Ordered<F extends FieldTypes, V> {
  lt(value: V): Filter<F>;
  gt(value: V): Filter<F>;
  lte(value: V): Filter<F>;
  gte(value: V): Filter<F>;
}
interface TextField<F extends FieldTypes> extends Sortable<F> {
  eq(value: string, options?: TextOptions): Filter<F>;
  ne(value: string, options?: TextOptions): Filter<F>;
  lt(value: string): Filter<F>;
  gt(value: string): Filter<F>;
  lte(value: string): Filter<F>;
  gte(value: string): Filter<F>;
  contains(value: string, options?: TextOptions): Filter<F>;
  notContains(value: string, options?: TextOptions): Filter<F>;
  startsWith(value: string, options?: TextOptions): Filter<F>;
  notStartsWith(value: string, options?: TextOptions): Filter<F>;
  endsWith(value: string, options?: TextOptions): Filter<F>;
  notEndsWith(value: string, options?: TextOptions): Filter<F>;
}

/** What each field offers follows its type in the read model's field map (the server refuses the rest with 422). */
export type FieldBuilder<F extends FieldTypes, T extends FieldType> = T extends 'text'
  ? TextField<F>
  : T extends 'boolean'
    ? Equality<F, boolean> & Sortable<F>
    : Equality<F, ValueOf<T>> & Ordered<F, ValueOf<T>> & Sortable<F>;

export type Fields<F extends FieldTypes> = { readonly [N in keyof F & string]: FieldBuilder<F, F[N]> };

/** `listAccountNfts` → `nfts`, `listEditions` → `editions`. */
type ShortName<K extends string> = K extends `listAccount${infer N}` ? Uncapitalize<N> : K extends `list${infer N}` ? Uncapitalize<N> : never;

export type FilterBuilders = { readonly [K in ListRouteName as ShortName<K>]: Fields<FieldsOf<K>> };

const special = /[(),|\\]|\/i/g;
/**
 * A value first in line after the operator is read as more operator (`=` then
 * `*x` is "contains x"), and white space there is skipped: escaping that one
 * character keeps it part of the value.
 */
const specialFirst = /^[=!<>^$*#\s\u0085]/u;

/**
 * Gridify's escaping (its documentation's `([(),|\\]|\/i)`, backslash before
 * each), and the first character when the lexer would not read it as value.
 */
export function escapeValue(value: string): string {
  return value.replace(special, '\\$&').replace(specialFirst, '\\$&');
}

function serialize(value: string | number | bigint | boolean): string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe integer; pass a string or a bigint`);
  return escapeValue(String(value));
}

const operators = {
  eq: '=',
  ne: '!=',
  lt: '<',
  gt: '>',
  lte: '<=',
  gte: '>=',
  contains: '=*',
  notContains: '!*',
  startsWith: '^',
  notStartsWith: '!^',
  endsWith: '$',
  notEndsWith: '!$',
} as const;

/** A part of a compound keeps its meaning only in parentheses when it joins differently (`,` and `|` bind equally in Gridify). */
const part = <F extends FieldTypes>(filter: Filter<F>, joiner: ',' | '|') => (filter.joiner && filter.joiner !== joiner ? `(${filter.text})` : filter.text);

function join<F extends FieldTypes>(joiner: ',' | '|', filters: Filter<F>[]): Filter<F> {
  if (filters.length === 1) return filters[0]!;
  return expression(filters.map((filter) => part(filter, joiner)).join(joiner), joiner);
}

function expression<F extends FieldTypes>(text: string, joiner?: ',' | '|'): Filter<F> {
  const self: Filter<F> = {
    text,
    joiner,
    and: (...others) => join(',', [self, ...others]),
    or: (...others) => join('|', [self, ...others]),
  };
  return self;
}

/** All conditions must hold. */
export const and = <F extends FieldTypes>(first: Filter<F>, ...rest: Filter<F>[]): Filter<F> => join(',', [first, ...rest]);
/** One condition must hold. */
export const or = <F extends FieldTypes>(first: Filter<F>, ...rest: Filter<F>[]): Filter<F> => join('|', [first, ...rest]);

function field(name: string): Record<string, unknown> {
  const builder: Record<string, unknown> = {
    asc: () => ({ text: `${name} asc` }),
    desc: () => ({ text: `${name} desc` }),
  };
  for (const [method, operator] of Object.entries(operators)) {
    builder[method] = (value: string | number | bigint | boolean, options?: TextOptions) =>
      expression(`${name}${operator}${serialize(value)}${options?.ignoreCase ? '/i' : ''}`);
  }
  return builder;
}

/** Builders for any field name; the types decide which names and methods exist. */
function fields<F extends FieldTypes>(): Fields<F> {
  return new Proxy({}, { get: (_target, name) => (typeof name === 'string' ? field(name) : undefined) }) as Fields<F>;
}

/** `filter.nfts.staked.eq(true)`: every list endpoint's fields, by the endpoint's short name. */
export const filter = new Proxy({}, { get: (_target, name) => (typeof name === 'string' ? fields() : undefined) }) as FilterBuilders;

/** What `filter` and `orderBy` accept: a raw Gridify string stays possible. */
export type FilterInput<F extends FieldTypes> = string | Filter<F> | ((fields: Fields<F>) => Filter<F>);
export type OrderInput<F extends FieldTypes> = string | Sort<F> | readonly Sort<F>[] | ((fields: Fields<F>) => Sort<F> | readonly Sort<F>[]);

export function filterText<F extends FieldTypes>(input: FilterInput<F>): string {
  if (typeof input === 'string') return input;
  return (typeof input === 'function' ? input(fields<F>()) : input).text;
}

export function orderText<F extends FieldTypes>(input: OrderInput<F>): string {
  if (typeof input === 'string') return input;
  const sorts = typeof input === 'function' ? input(fields<F>()) : input;
  return (Array.isArray(sorts) ? (sorts as readonly Sort<F>[]) : [sorts as Sort<F>]).map((sort) => sort.text).join(',');
}
