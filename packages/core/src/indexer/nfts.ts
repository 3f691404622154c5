import type { ListSource } from '../query/page-query';
import type { FieldMap, Params } from '../query/compile';
import { indexerAddress, indexerTable } from './names';
import type { nftItemSchema } from './nfts-schema';
import type * as z from '@hatchery/platform/schema';

export type NftItemDto = z.infer<typeof nftItemSchema>;

// Edition columns go through coalesce: an NFT whose edition is not indexed yet is still listed, with "" and 0 (as listings do).
export const nftFields = {
  tokenId: { sql: 'n.token_id', type: 'bigint' },
  editionId: { sql: 'n.edition_id', type: 'bigint' },
  editionName: { sql: `coalesce(e.name, '')`, type: 'text', joined: true, words: true },
  rarity: { sql: 'coalesce(e.rarity, 0)', type: 'integer', joined: true },
  gender: { sql: 'n.gender', type: 'integer' },
  staked: { sql: 'n.staked', type: 'boolean' },
} as const satisfies FieldMap;

export const nftsSource = {
  name: 'nfts',
  get table() {
    return `${indexerTable('nfts')} n`;
  },
  get joins() {
    return `LEFT JOIN ${indexerTable('editions')} e ON e.edition_id = n.edition_id`;
  },
  select: `n.token_id::text AS "tokenId", coalesce(e.health, 0) AS health, coalesce(e.skill, 0) AS skill,
    coalesce(e.morale, 0) AS morale, n.gender, n.edition_id::text AS "editionId", ${nftFields.editionName.sql} AS "editionName",
    coalesce(e.art_uri, '') AS "artUri", ${nftFields.rarity.sql} AS rarity, n.nft_name AS "nftName", n.staked`,
  fields: nftFields,
  order: { defaultOrder: [{ field: 'tokenId', direction: 'desc' }], tieBreaker: { sql: 'n.token_id', direction: 'desc', type: 'bigint' } },
} satisfies ListSource;

/** The owner match (docs/http-api.md) is case-insensitive, staked NFTs are included, burned ones never. */
export const ownedNfts = (owner: string) => (params: Params) => [`n.owner = ${params.add(indexerAddress(owner))}`, 'NOT n.burned'];
