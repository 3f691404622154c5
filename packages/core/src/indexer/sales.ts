import type { ListSource } from '../query/page-query';
import type { FieldMap } from '../query/compile';
import { indexerTable } from './names';
import type { saleSchema } from './sales-schema';
import type * as z from '@hatchery/platform/schema';

export type SaleDto = z.infer<typeof saleSchema>;

export const saleFields = {
  seller: { sql: 'seller', type: 'text' },
  buyer: { sql: 'buyer', type: 'text' },
  tokenId: { sql: 'token_id', type: 'bigint' },
  blockNumber: { sql: 'block_number', type: 'bigint' },
} as const satisfies FieldMap;

export const salesSource = {
  name: 'sales',
  get table() {
    return indexerTable('sales');
  },
  select: `token_id::text AS "tokenId", seller, buyer, price::text AS price, platform_fee::text AS "platformFee",
    royalty::text AS royalty, block_number::text AS "blockNumber"`,
  fields: saleFields,
  order: { defaultOrder: [{ field: 'blockNumber', direction: 'desc' }], tieBreaker: { sql: 'id', direction: 'desc', type: 'text' } },
} satisfies ListSource;
