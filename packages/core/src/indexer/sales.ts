import { listSource, type ItemOf } from '../query/read-model';
import { indexerTable } from './names';

export const salesModel = {
  name: 'sales',
  get table() {
    return indexerTable('sales');
  },
  fields: {
    tokenId: { sql: 'token_id', type: 'bigint', filter: true },
    seller: { sql: 'seller', type: 'address', filter: true },
    buyer: { sql: 'buyer', type: 'address', filter: true },
    price: { sql: 'price', type: 'bigint', description: 'Wei.' },
    platformFee: { sql: 'platform_fee', type: 'bigint', description: 'Wei.' },
    royalty: { sql: 'royalty', type: 'bigint', description: 'Wei.' },
    blockNumber: { sql: 'block_number', type: 'bigint', filter: true },
  },
  order: { defaultOrder: [{ field: 'blockNumber', direction: 'desc' }], tieBreaker: { sql: 'id', direction: 'desc', type: 'text' } },
} as const;

export const salesSource = listSource(salesModel);
export const saleFields = salesSource.fields;
export type SaleDto = ItemOf<typeof salesModel.fields>;
