import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/*
 * A staked pair as the account's staking list answers it, for the OpenAPI
 * document and the client's types. Apart from staking.ts, as
 * freshness-schema.ts is from freshness.ts: each paged read imports that
 * module's query source, and constructing this schema cost its cold start,
 * though only the document and the types need it.
 */

export const stakingPairSchema = z.object({
  pairId: bigIntString,
  maleId: bigIntString,
  femaleId: bigIntString,
  matched: z.boolean(),
  stakedAt: bigIntString,
  lastClaimAt: bigIntString,
  status: z.string(),
});
