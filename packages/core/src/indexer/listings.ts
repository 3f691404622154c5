import type { Params } from '../query/compile';
import { listSource, type ItemOf } from '../query/read-model';
import { indexerTable } from './names';

/** The only listing status the endpoint serves (docs/http-api.md); fixed on the server. */
const activeListingStatus = 'Active';

// NFT metadata comes from a left join and may be missing: strings are then "", numbers 0, editionId "0" (docs/http-api.md, Indexed data).
// Filters and sorts see the same values the client does.
export const listingsModel = {
  name: 'listings',
  get table() {
    return `${indexerTable('listings')} l`;
  },
  // Both join on primary keys, so a count that names no joined field reads listings alone (its status index).
  get joins() {
    return `LEFT JOIN ${indexerTable('nfts')} n ON n.token_id = l.token_id
    LEFT JOIN ${indexerTable('editions')} e ON e.edition_id = coalesce(l.edition_id, n.edition_id)`;
  },
  fields: {
    tokenId: { sql: 'l.token_id', type: 'bigint', filter: true },
    seller: { sql: 'l.seller', type: 'address', filter: true },
    price: { sql: 'l.price', type: 'bigint', filter: true, description: 'Wei.' },
    status: { sql: 'l.status', type: 'string', filter: true },
    editionId: {
      sql: 'coalesce(l.edition_id, n.edition_id, 0)',
      type: 'bigint',
      filter: true,
      joined: true,
      description: '"0" when the listed NFT is not indexed.',
    },
    editionName: { sql: `coalesce(e.name, '')`, type: 'string', filter: true, joined: true, words: true },
    artUri: { sql: `coalesce(e.art_uri, '')`, type: 'string' },
    rarity: { sql: 'coalesce(e.rarity, 0)', type: 'int', filter: true, joined: true },
    gender: { sql: 'coalesce(n.gender, 0)', type: 'int', filter: true, joined: true },
    nftName: { sql: `coalesce(n.nft_name, '')`, type: 'string' },
    attributes: {
      group: {
        health: { sql: 'coalesce(e.health, 0)', type: 'int' },
        skill: { sql: 'coalesce(e.skill, 0)', type: 'int' },
        morale: { sql: 'coalesce(e.morale, 0)', type: 'int' },
      },
    },
    listedAtBlock: { sql: 'l.listed_at_block', type: 'bigint', filter: true, hidden: true },
  },
  order: { defaultOrder: [{ field: 'listedAtBlock', direction: 'desc' }], tieBreaker: { sql: 'l.token_id', direction: 'desc', type: 'bigint' } },
} as const;

export const listingsSource = listSource(listingsModel);
export const listingFields = listingsSource.fields;
export type ListingDto = ItemOf<typeof listingsModel.fields>;

export const activeListings = (params: Params) => [`l.status = ${params.add(activeListingStatus)}`];
