import * as z from '@hatchery/platform/schema';
import { addressString, bigIntString } from '../indexer/wire';
import type { ColumnField, GroupField, ModelField, ModelFields, ReadModel, WireType } from './read-model';

/*
 * The zod schema of a read model's item, for the OpenAPI document, the client's types and the tests. Only
 * responses.ts imports this module: a handler that built these schemas would pay for them at every cold start.
 */

export type BaseSchema<T extends WireType> = T extends 'int' ? z.ZodMiniInt : T extends 'boolean' ? z.ZodMiniBoolean<boolean> : z.ZodMiniString<string>;
type FieldSchema<F> = F extends { group: infer G extends ModelFields }
  ? ItemSchema<G>
  : F extends { type: infer T extends WireType }
    ? F extends { optional: true }
      ? z.ZodMiniOptional<BaseSchema<T>>
      : BaseSchema<T>
    : never;
type Shape<F extends ModelFields> = { [K in keyof F as F[K] extends { hidden: true } ? never : K]: FieldSchema<F[K]> };
type ItemSchema<F extends ModelFields> = z.ZodMiniObject<Shape<F>, z.core.$strip>;

export function baseSchema(type: WireType): z.ZodMiniType {
  switch (type) {
    case 'bigint':
      return bigIntString;
    case 'address':
      return addressString;
    case 'string':
      return z.string();
    case 'int':
      return z.int();
    case 'boolean':
      return z.boolean();
  }
}

function columnSchema(field: ColumnField): z.ZodMiniType {
  const base = field.optional ? z.optional(baseSchema(field.type)) : baseSchema(field.type);
  // A description is a check on a clone: the shared wire schemas keep none.
  return field.description ? base.check(z.describe(field.description)) : base;
}

function shapeOf(fields: ModelFields): Record<string, z.ZodMiniType> {
  const shape: Record<string, z.ZodMiniType> = {};
  for (const [name, field] of Object.entries(fields) as [string, ModelField][]) {
    if ('group' in field) shape[name] = z.object(shapeOf((field as GroupField).group));
    else if (!field.hidden) shape[name] = columnSchema(field);
  }
  return shape;
}

/** The schema of the items a read model answers. */
export function itemSchema<const F extends ModelFields>(model: ReadModel<F>): ItemSchema<F> {
  return z.object(shapeOf(model.fields)) as unknown as ItemSchema<F>;
}
