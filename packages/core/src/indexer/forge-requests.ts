import type { ListSource } from '../query/page-query';
import type { FieldMap, Params } from '../query/compile';
import { bigIntString, indexerAddress } from './wire';
import { indexerTable } from './names';
import * as z from '@hatchery/platform/schema';

export const forgeRequestSchema = /* @__PURE__ */ z.object({
  requestId: bigIntString,
  tier: z.int(),
  status: z.string(),
  tokenId: z.optional(bigIntString).check(z.describe('Absent until the request is fulfilled.')),
  editionId: z.optional(bigIntString).check(z.describe('Absent until the request is fulfilled.')),
  blockNumber: bigIntString,
});

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
