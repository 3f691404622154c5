import type { Params } from '../query/compile';
import { listSource, type ItemOf } from '../query/read-model';
import { indexerAddress, indexerTable } from './names';

export const forgeRequestsModel = {
  name: 'forge-requests',
  get table() {
    return indexerTable('forge_requests');
  },
  fields: {
    requestId: { sql: 'request_id', type: 'bigint', filter: true },
    tier: { sql: 'tier', type: 'int', filter: true },
    status: { sql: 'status', type: 'string', filter: true },
    tokenId: { sql: 'token_id', type: 'bigint', optional: true, description: 'Absent until the request is fulfilled.' },
    editionId: { sql: 'edition_id', type: 'bigint', optional: true, description: 'Absent until the request is fulfilled.' },
    blockNumber: { sql: 'block_number', type: 'bigint' },
  },
  order: { defaultOrder: [{ field: 'requestId', direction: 'desc' }], tieBreaker: { sql: 'request_id', direction: 'desc', type: 'bigint' } },
} as const;

export const forgeRequestsSource = listSource(forgeRequestsModel);
export const forgeRequestFields = forgeRequestsSource.fields;
export type ForgeRequestDto = ItemOf<typeof forgeRequestsModel.fields>;

/** Every status is served; only the buyer is fixed. */
export const requestedBy = (buyer: string) => (params: Params) => [`buyer = ${params.add(indexerAddress(buyer))}`];
