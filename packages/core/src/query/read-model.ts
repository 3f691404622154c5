import type { FieldSpec, FieldType, OrderSpec } from './compile';
import type { ListSource } from './page-query';

/**
 * A paged list declared once, as plain data: each field of its item with the
 * SQL that reads it, its wire type, whether filter and orderBy take it, and
 * its description. The select list, the field map, the row-to-item mapping
 * and, in item-schema.ts, the item's zod schema all derive from it. Declaring it builds no schema, so the route
 * table and the handlers can import it at no cost to their cold start.
 */

/** How a value travels: big integers and addresses as strings (docs/http-api.md), 32-bit integers and booleans as JSON's own. */
export type WireType = 'bigint' | 'address' | 'string' | 'int' | 'boolean';

export interface ColumnField {
  /** A trusted SQL expression over the list's tables (a column); never built from input. */
  readonly sql: string;
  readonly type: WireType;
  /** Filter and orderBy take it, under its name, in the order the fields are declared. */
  readonly filter?: true;
  /** Read from a joined table: a count whose filter names it needs the joins. */
  readonly joined?: true;
  /** Text people read, sorted as Gridify's culture-aware comparer does (FieldSpec.words). */
  readonly words?: true;
  /** NULL in the row leaves it out of the item. */
  readonly optional?: true;
  /** Filters and sorts without being part of the item. */
  readonly hidden?: true;
  readonly description?: string;
}

/** Fields the item nests under one name; each reads a column of its own, and may filter under its own name. */
export interface GroupField {
  readonly group: Readonly<Record<string, ColumnField>>;
}

export type ModelField = ColumnField | GroupField;
export type ModelFields = Readonly<Record<string, ModelField>>;

export interface ReadModel<F extends ModelFields = ModelFields> {
  /** Names the list in the count cache's keys and its cursors' bindings. */
  readonly name: string;
  /** The base table and its alias, read when a statement is built (the indexer's schema is a setting). */
  readonly table: string;
  /** LEFT JOINs on unique keys, so they never change the number of rows. */
  readonly joins?: string;
  readonly fields: F;
  readonly order: OrderSpec;
}

type Flat<T> = { [K in keyof T]: T[K] };
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

type Columns<F extends ModelFields> = Flat<
  { [K in keyof F as F[K] extends GroupField ? never : K]: F[K] } & UnionToIntersection<{ [K in keyof F]: F[K] extends { group: infer G } ? G : {} }[keyof F]>
>;

type FilterTypeOf<T extends WireType> = T extends 'bigint' ? 'bigint' : T extends 'int' ? 'integer' : T extends 'boolean' ? 'boolean' : 'text';

/** The filter and sort fields a declaration gives, with the type of each. */
type FieldsOf<F extends ModelFields> = {
  readonly [K in keyof Columns<F> as Columns<F>[K] extends { filter: true } ? K : never]: FieldSpec & {
    readonly type: Columns<F>[K] extends { type: infer T extends WireType } ? FilterTypeOf<T> : never;
  };
};

type ValueOf<T extends WireType> = T extends 'int' ? number : T extends 'boolean' ? boolean : string;
type Shown<F extends ModelFields> = { [K in keyof F as F[K] extends { hidden: true } ? never : K]: F[K] };
type ItemValue<F> = F extends { group: infer G extends ModelFields } ? ItemOf<G> : F extends { type: infer T extends WireType } ? ValueOf<T> : never;

/** The item a declaration answers. */
export type ItemOf<F extends ModelFields> = Flat<
  { [K in keyof Shown<F> as Shown<F>[K] extends { optional: true } ? never : K]: ItemValue<Shown<F>[K]> } & {
    [K in keyof Shown<F> as Shown<F>[K] extends { optional: true } ? K : never]?: ItemValue<Shown<F>[K]>;
  }
>;

const filterTypes: Record<WireType, FieldType> = { bigint: 'bigint', address: 'text', string: 'text', int: 'integer', boolean: 'boolean' };

const isGroup = (field: ModelField): field is GroupField => 'group' in field;

/** A column field, by its name in the row (a grouped one by its own name), and the group it nests in, if any. */
interface Column {
  readonly name: string;
  readonly field: ColumnField;
  readonly group?: string;
}

/** Each column field, in declaration order. */
function columnsOf(fields: ModelFields): Column[] {
  return Object.entries(fields).flatMap(([name, field]): Column[] =>
    isGroup(field) ? Object.entries(field.group).map(([member, column]) => ({ name: member, field: column, group: name })) : [{ name, field }],
  );
}

/** Big integers leave the database as text, so that no digit is lost on the way to JSON. */
const selectOf = ({ name, field }: Column) => `${field.sql}${field.type === 'bigint' ? '::text' : ''} AS "${name}"`;

type ListOf<F extends ModelFields> = Omit<ListSource, 'fields'> & { readonly fields: FieldsOf<F> };

/** The list source (select, field map, order, item) a declaration gives. */
export function listSource<const F extends ModelFields>(model: ReadModel<F>): ListOf<F> {
  const columns = columnsOf(model.fields);
  const fields: Record<string, FieldSpec> = {};
  for (const { name, field } of columns) {
    if (!field.filter) continue;
    fields[name] = { sql: field.sql, type: filterTypes[field.type], ...(field.joined && { joined: true }), ...(field.words && { words: true }) };
  }
  const shown = columns.filter(({ field }) => !field.hidden);
  const source: ListSource = {
    name: model.name,
    get table() {
      return model.table;
    },
    get joins() {
      return model.joins;
    },
    select: shown.map(selectOf).join(', '),
    fields,
    order: model.order,
    item: itemOf(shown),
  };
  return source as ListOf<F>;
}

/**
 * Builds an item straight from a row's values in select order, the only
 * object a row makes: groups nest their columns, and a NULL leaves its field
 * out (docs/http-api.md: null values are omitted), so the item serializes as
 * it is. The key columns after the shown ones are not read.
 */
function itemOf(shown: readonly Column[]): (values: readonly unknown[]) => unknown {
  const names = shown.map(({ name }) => name);
  const groups = shown.map(({ group }) => group);
  return (values) => {
    const item: Record<string, unknown> = {};
    for (let index = 0; index < names.length; index++) {
      const group = groups[index];
      const target = group === undefined ? item : ((item[group] ??= {}) as Record<string, unknown>);
      const value = values[index];
      if (value !== null && value !== undefined) target[names[index]!] = value;
    }
    return item;
  };
}
