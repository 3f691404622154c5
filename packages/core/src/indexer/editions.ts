import { listSource } from '../query/read-model';
import { indexerTable } from './names';

export const editionsModel = {
  name: 'editions',
  get table() {
    return indexerTable('editions');
  },
  fields: {
    id: { sql: 'edition_id', type: 'bigint', filter: true },
    name: { sql: 'name', type: 'string', filter: true, words: true },
    artUri: { sql: 'art_uri', type: 'string' },
    health: { sql: 'health', type: 'int' },
    skill: { sql: 'skill', type: 'int' },
    morale: { sql: 'morale', type: 'int' },
    rarity: { sql: 'rarity', type: 'int', filter: true },
    maxSupply: { sql: 'max_supply', type: 'bigint' },
    minted: { sql: 'minted', type: 'bigint' },
    mintStart: { sql: 'mint_start', type: 'bigint' },
    mintEnd: { sql: 'mint_end', type: 'bigint' },
    price: { sql: 'price', type: 'bigint', description: 'Wei.' },
    distribution: { sql: 'distribution', type: 'int', filter: true },
    active: { sql: 'active', type: 'boolean', filter: true },
  },
  order: { defaultOrder: [{ field: 'id', direction: 'asc' }], tieBreaker: { sql: 'edition_id', direction: 'asc', type: 'bigint' } },
} as const;

export const editionsSource = listSource(editionsModel);
export const editionFields = editionsSource.fields;
