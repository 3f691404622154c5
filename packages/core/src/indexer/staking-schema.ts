import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/** A staked pair as the account's staking list answers it, for the OpenAPI document and the client's types: apart from staking.ts, which the handlers import (see responses.ts). */
export const stakingPairSchema = z.object({
  pairId: bigIntString,
  maleId: bigIntString,
  femaleId: bigIntString,
  matched: z.boolean(),
  stakedAt: bigIntString,
  lastClaimAt: bigIntString,
  status: z.string(),
});
