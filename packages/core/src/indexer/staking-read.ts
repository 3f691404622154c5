import { readPage, type Page } from '../query/paging';
import type { PageQuery } from '../query/page-query';
import { stakedBy, stakingSource, type StakingPairDto } from './staking';

export async function listAccountStaking(staker: string, request: PageQuery): Promise<Page<StakingPairDto>> {
  return readPage(stakingSource, request, toStakingPairDto, stakedBy(staker));
}

function toStakingPairDto(row: StakingPairDto): StakingPairDto {
  return {
    pairId: row.pairId,
    maleId: row.maleId,
    femaleId: row.femaleId,
    matched: row.matched,
    stakedAt: row.stakedAt,
    lastClaimAt: row.lastClaimAt,
    status: row.status,
  };
}
