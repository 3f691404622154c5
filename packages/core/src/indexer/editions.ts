import type { ListSource } from '../query/page-query';
import type { FieldMap } from '../query/compile';
import { indexerTable } from './names';
import type { editionSchema } from './editions-schema';
import type * as z from '@hatchery/platform/schema';

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
