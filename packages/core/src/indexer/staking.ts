import type { ListSource } from '../query/page-query';
import type { FieldMap, Params } from '../query/compile';
import { indexerAddress, indexerTable } from './names';
import type { stakingPairSchema } from './staking-schema';
import type * as z from '@hatchery/platform/schema';

export type StakingPairDto = z.infer<typeof stakingPairSchema>;

/** The only pair status the endpoint serves (docs/http-api.md); unstaked pairs never appear. */
export const stakedPairStatus = 'Staked';

export const stakingFields = {
  status: { sql: 'status', type: 'text' },
  matched: { sql: 'matched', type: 'boolean' },
  pairId: { sql: 'pair_id', type: 'bigint' },
  stakedAt: { sql: 'staked_at', type: 'bigint' },
  lastClaimAt: { sql: 'last_claim_at', type: 'bigint' },
} as const satisfies FieldMap;

export const stakingSource = {
  name: 'staking',
  get table() {
    return indexerTable('staking_pairs');
  },
  select: `pair_id::text AS "pairId", male_id::text AS "maleId", female_id::text AS "femaleId", matched,
    staked_at::text AS "stakedAt", last_claim_at::text AS "lastClaimAt", status`,
  fields: stakingFields,
  order: { defaultOrder: [{ field: 'stakedAt', direction: 'desc' }], tieBreaker: { sql: 'pair_id', direction: 'desc', type: 'bigint' } },
} satisfies ListSource;

export const stakedBy = (staker: string) => (params: Params) => [`staker = ${params.add(indexerAddress(staker))}`, `status = ${params.add(stakedPairStatus)}`];
