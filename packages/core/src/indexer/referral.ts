import { addressString, bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

export const referralInfoSchema = z.object({
  code: z.optional(bigIntString).check(z.describe('Absent when the address never registered as a referrer.')),
  upline: z.optional(addressString).check(z.describe('The referrer of the address; absent when it was never referred.')),
  referralCount: z.int().check(z.describe('Accounts this address referred.')),
  pending: bigIntString.check(z.describe('Wei: totalAccrued − totalClaimed.')),
  totalAccrued: bigIntString.check(z.describe('Wei.')),
  totalClaimed: bigIntString.check(z.describe('Wei.')),
});

export type ReferralInfoDto = z.infer<typeof referralInfoSchema>;
