import type { ListSource } from '../query/page-query';
import type { FieldMap, Params } from '../query/compile';
import { indexerTable } from './names';
import type { listingSchema } from './listings-schema';
import type * as z from '@hatchery/platform/schema';

export type ListingDto = z.infer<typeof listingSchema>;

/** The only listing status the endpoint serves (docs/http-api.md); fixed on the server. */
export const activeListingStatus = 'Active';

// NFT metadata comes from a left join and may be missing: strings are then "", numbers 0, editionId "0" (docs/http-api.md, Indexed data).
// Filters and sorts see the same values the client does.
export const listingFields = {
  tokenId: { sql: 'l.token_id', type: 'bigint' },
  seller: { sql: 'l.seller', type: 'text' },
  price: { sql: 'l.price', type: 'bigint' },
  status: { sql: 'l.status', type: 'text' },
  editionId: { sql: 'coalesce(l.edition_id, n.edition_id, 0)', type: 'bigint', joined: true },
  editionName: { sql: `coalesce(e.name, '')`, type: 'text', joined: true, words: true },
  rarity: { sql: 'coalesce(e.rarity, 0)', type: 'integer', joined: true },
  gender: { sql: 'coalesce(n.gender, 0)', type: 'integer', joined: true },
  listedAtBlock: { sql: 'l.listed_at_block', type: 'bigint' },
} as const satisfies FieldMap;

export const listingsSource = {
  name: 'listings',
  get table() {
    return `${indexerTable('listings')} l`;
  },
  // Both join on primary keys, so a count that names no joined field reads listings alone (its status index).
  get joins() {
    return `LEFT JOIN ${indexerTable('nfts')} n ON n.token_id = l.token_id
    LEFT JOIN ${indexerTable('editions')} e ON e.edition_id = coalesce(l.edition_id, n.edition_id)`;
  },
  select: `l.token_id::text AS "tokenId", l.seller, l.price::text AS price, l.status,
    ${listingFields.editionId.sql}::text AS "editionId", ${listingFields.editionName.sql} AS "editionName",
    coalesce(e.art_uri, '') AS "artUri", ${listingFields.rarity.sql} AS rarity, ${listingFields.gender.sql} AS gender,
    coalesce(n.nft_name, '') AS "nftName", coalesce(e.health, 0) AS health, coalesce(e.skill, 0) AS skill,
    coalesce(e.morale, 0) AS morale`,
  fields: listingFields,
  order: { defaultOrder: [{ field: 'listedAtBlock', direction: 'desc' }], tieBreaker: { sql: 'l.token_id', direction: 'desc', type: 'bigint' } },
} satisfies ListSource;

export const activeListings = (params: Params) => [`l.status = ${params.add(activeListingStatus)}`];
