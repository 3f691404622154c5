import type { Params } from '../query/compile';
import { listSource, type ItemOf } from '../query/read-model';
import { indexerAddress, indexerTable } from './names';

/** The only pair status the endpoint serves (docs/http-api.md); unstaked pairs never appear. */
const stakedPairStatus = 'Staked';

export const stakingModel = {
  name: 'staking',
  get table() {
    return indexerTable('staking_pairs');
  },
  fields: {
    pairId: { sql: 'pair_id', type: 'bigint', filter: true },
    maleId: { sql: 'male_id', type: 'bigint' },
    femaleId: { sql: 'female_id', type: 'bigint' },
    matched: { sql: 'matched', type: 'boolean', filter: true },
    stakedAt: { sql: 'staked_at', type: 'bigint', filter: true },
    lastClaimAt: { sql: 'last_claim_at', type: 'bigint', filter: true },
    status: { sql: 'status', type: 'string', filter: true },
  },
  order: { defaultOrder: [{ field: 'stakedAt', direction: 'desc' }], tieBreaker: { sql: 'pair_id', direction: 'desc', type: 'bigint' } },
} as const;

export const stakingSource = listSource(stakingModel);
export const stakingFields = stakingSource.fields;
export type StakingPairDto = ItemOf<typeof stakingModel.fields>;

export const stakedBy = (staker: string) => (params: Params) => [`staker = ${params.add(indexerAddress(staker))}`, `status = ${params.add(stakedPairStatus)}`];
