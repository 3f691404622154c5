import type { Params } from '../query/compile';
import { listSource, type ItemOf } from '../query/read-model';
import { indexerAddress, indexerTable } from './names';

// Edition columns go through coalesce: an NFT whose edition is not indexed yet is still listed, with "" and 0 (as listings do).
export const nftsModel = {
  name: 'nfts',
  get table() {
    return `${indexerTable('nfts')} n`;
  },
  get joins() {
    return `LEFT JOIN ${indexerTable('editions')} e ON e.edition_id = n.edition_id`;
  },
  fields: {
    tokenId: { sql: 'n.token_id', type: 'bigint', filter: true },
    attributes: {
      group: {
        health: { sql: 'coalesce(e.health, 0)', type: 'int' },
        skill: { sql: 'coalesce(e.skill, 0)', type: 'int' },
        morale: { sql: 'coalesce(e.morale, 0)', type: 'int' },
        gender: { sql: 'n.gender', type: 'int', filter: true },
      },
    },
    editionId: { sql: 'n.edition_id', type: 'bigint', filter: true },
    editionName: { sql: `coalesce(e.name, '')`, type: 'string', filter: true, joined: true, words: true },
    artUri: { sql: `coalesce(e.art_uri, '')`, type: 'string' },
    rarity: { sql: 'coalesce(e.rarity, 0)', type: 'int', filter: true, joined: true },
    nftName: { sql: 'n.nft_name', type: 'string' },
    staked: { sql: 'n.staked', type: 'boolean', filter: true },
  },
  order: { defaultOrder: [{ field: 'tokenId', direction: 'desc' }], tieBreaker: { sql: 'n.token_id', direction: 'desc', type: 'bigint' } },
} as const;

export const nftsSource = listSource(nftsModel);
export const nftFields = nftsSource.fields;
export type NftItemDto = ItemOf<typeof nftsModel.fields>;

/** The owner match (docs/http-api.md) is case-insensitive, staked NFTs are included, burned ones never. */
export const ownedNfts = (owner: string) => (params: Params) => [`n.owner = ${params.add(indexerAddress(owner))}`, 'NOT n.burned'];
