import { readPage, type ListSource, type Page, type PageQuery } from '../query/paging';
import type { FieldMap } from '../query/compile';
import { bigIntString } from './wire';
import { indexerTable } from './names';
import * as z from '../schema';

export const editionSchema = z.object({
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

export async function listEditions(request: PageQuery): Promise<Page<EditionDto>> {
  return readPage(editionsSource, request, toEditionDto);
}

function toEditionDto(row: EditionDto): EditionDto {
  return {
    id: row.id,
    name: row.name,
    artUri: row.artUri,
    health: row.health,
    skill: row.skill,
    morale: row.morale,
    rarity: row.rarity,
    maxSupply: row.maxSupply,
    minted: row.minted,
    mintStart: row.mintStart,
    mintEnd: row.mintEnd,
    price: row.price,
    distribution: row.distribution,
    active: row.active,
  };
}
