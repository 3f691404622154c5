import type { ListSource } from '../query/page-query';
import type { FieldMap, Params } from '../query/compile';
import { indexerAddress, indexerTable } from './names';
import type { forgeRequestSchema } from './forge-requests-schema';
import type * as z from '@hatchery/platform/schema';

export type ForgeRequestDto = z.infer<typeof forgeRequestSchema>;

export const forgeRequestFields = {
  status: { sql: 'status', type: 'text' },
  tier: { sql: 'tier', type: 'integer' },
  requestId: { sql: 'request_id', type: 'bigint' },
} as const satisfies FieldMap;

export const forgeRequestsSource = {
  name: 'forge-requests',
  get table() {
    return indexerTable('forge_requests');
  },
  select: `request_id::text AS "requestId", tier, status, token_id::text AS "tokenId", edition_id::text AS "editionId",
    block_number::text AS "blockNumber"`,
  fields: forgeRequestFields,
  order: { defaultOrder: [{ field: 'requestId', direction: 'desc' }], tieBreaker: { sql: 'request_id', direction: 'desc', type: 'bigint' } },
} satisfies ListSource;

/** Every status is served; only the buyer is fixed. */
export const requestedBy = (buyer: string) => (params: Params) => [`buyer = ${params.add(indexerAddress(buyer))}`];
