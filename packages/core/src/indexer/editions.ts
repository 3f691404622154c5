import type { ListSource } from '../query/page-query';
import type { FieldMap } from '../query/compile';
import { bigIntString } from './wire';
import { indexerTable } from './names';
import * as z from '@hatchery/platform/schema';

export const editionSchema = /* @__PURE__ */ z.object({
  id: bigIntString,
  name: z.string(),
  artUri: z.string(),
  health: z.int(),
  skill: z.int(),
  morale: z.int(),
  rarity: z.int(),
  maxSupply: bigIntString,
  minted: bigIntString,
  mintStart: bigIntString,
  mintEnd: bigIntString,
  price: bigIntString.check(z.describe('Wei.')),
  distribution: z.int(),
  active: z.boolean(),
});

export type EditionDto = z.infer<typeof editionSchema>;

export const editionFields = {
  id: { sql: 'edition_id', type: 'bigint' },
  name: { sql: 'name', type: 'text', words: true },
  rarity: { sql: 'rarity', type: 'integer' },
  active: { sql: 'active', type: 'boolean' },
  distribution: { sql: 'distribution', type: 'integer' },
} as const satisfies FieldMap;

export const editionsSource = {
  name: 'editions',
  get table() {
    return indexerTable('editions');
  },
  select: `edition_id::text AS id, name, art_uri AS "artUri", health, skill, morale, rarity,
    max_supply::text AS "maxSupply", minted::text AS minted, mint_start::text AS "mintStart",
    mint_end::text AS "mintEnd", price::text AS price, distribution, active`,
  fields: editionFields,
  order: { defaultOrder: [{ field: 'id', direction: 'asc' }], tieBreaker: { sql: 'edition_id', direction: 'asc', type: 'bigint' } },
} satisfies ListSource;
