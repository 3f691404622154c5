import * as z from '@hatchery/platform/schema';
import { baseSchema, type BaseSchema } from '../query/item-schema';
import type { WireType } from '../query/read-model';
import { allEventTypes, eventCatalogue, revertedSuffix, type AnyEventType, type EventDeclaration, type EventType, type RevertedType } from './catalogue';

/*
 * The zod schemas of the log's events, derived from the catalogue, for the OpenAPI document and the typed client's
 * types. Only responses.ts and the tests import this module (see query/item-schema.ts for why).
 */

function payloadSchema(declaration: EventDeclaration): z.ZodMiniType {
  const shape: Record<string, z.ZodMiniType> = {};
  for (const [name, field] of Object.entries(declaration.payload)) {
    const base = baseSchema(field.type).check(z.describe(field.description));
    shape[name] = field.optional ? z.optional(base) : base;
  }
  return z.object(shape);
}

/* @__NO_SIDE_EFFECTS__ */
const documented = <S extends z.ZodMiniType>(schema: S, description: string, example: unknown): S => {
  z.globalRegistry.add(schema, { description, examples: [example] } as z.core.GlobalMeta);
  return schema;
};

const common = {
  id: documented(z.string(), '`evt_<position>`: the same in every delivery of the event, for receivers to deduplicate on.', 'evt_4211'),
  position: documented(z.int(), 'The event’s place in the log: it only grows, with no holes.', 4211),
  chainId: documented(z.nullable(z.int()), 'The chain, from the indexer’s checkpoint.', 31337),
  blockNumber: documented(z.string(), 'The block the event happened in.', '5000012'),
  entity: documented(z.string(), 'What the event is about (the catalogue says, per type).', '602'),
  wallets: documented(z.array(z.string()), 'The wallets the event concerns, lowercase: what `wallet` filters on.', [
    '0x0000000000000000000000000000000000000001',
  ]),
  createdAt: documented(z.string(), 'When the log recorded it (ISO 8601).', '2026-01-01T12:00:00.000Z'),
};

const revertsSchema = z
  .object({ id: z.string(), position: z.int() })
  .check(z.describe('The event this one retracts: a reorg removed the rows it was detected from.'));

type PayloadSchema<P> = z.ZodMiniObject<
  {
    [K in keyof P]: P[K] extends { type: infer T extends WireType }
      ? P[K] extends { optional: true }
        ? z.ZodMiniOptional<BaseSchema<T>>
        : BaseSchema<T>
      : never;
  },
  z.core.$strip
>;
type DeclaredOf<T extends AnyEventType> = T extends `${infer D extends EventType}${typeof revertedSuffix}` ? D : T;
type EventSchemaOf<T extends AnyEventType> = z.ZodMiniObject<
  typeof common & {
    type: z.ZodMiniLiteral<T>;
    payload: PayloadSchema<(typeof eventCatalogue)[DeclaredOf<T & AnyEventType>]['payload']>;
  } & (T extends RevertedType ? { reverts: typeof revertsSchema } : {}),
  z.core.$strip
>;

/** One schema per type the log holds: a declared type, or its `.reverted` retraction (which repeats the payload it retracts). */
export const eventSchema = z.union(
  allEventTypes.map((type) => {
    const declared = type.endsWith(revertedSuffix) ? type.slice(0, -revertedSuffix.length) : type;
    const payload = payloadSchema(eventCatalogue[declared as keyof typeof eventCatalogue]);
    return type.endsWith(revertedSuffix)
      ? z.object({ ...common, type: z.literal(type), payload, reverts: revertsSchema })
      : z.object({ ...common, type: z.literal(type), payload });
  }) as unknown as [z.ZodMiniType, ...z.ZodMiniType[]],
) as unknown as z.ZodMiniUnion<{ [T in AnyEventType]: EventSchemaOf<T> }[AnyEventType][]>;

export const eventPageSchema = z.object({
  items: z.array(eventSchema),
  nextCursor: z
    .string()
    .check(
      z.describe(
        'Where to read on from: the `after` of the next page, present on every page (an empty one too), so a reader polls with it and misses nothing.',
      ),
    ),
  hasMore: z.boolean().check(z.describe('More events are kept past this page now (at the finality asked for).')),
});
