import { addressString } from '../indexer/wire';
import { accountLimits, accountPatterns } from './limits';
import * as z from '@hatchery/platform/schema';
import { addressPattern } from '../address';

/** What the account endpoints take and answer (docs/http-api.md); kept free of data access so the route table stays light. */

const accountStatuses = ['ACTIVE', 'DISABLED'] as const;

/** AccountDto: timestamps stay in the database. */
export const accountSchema = z.object({
  id: z.string(),
  email: z.string(),
  nickname: z.string(),
  status: z.enum(accountStatuses),
  walletAddress: z.optional(addressString).check(z.describe('Lowercase, as recovered from the signature; absent when no wallet is linked.')),
  walletLinked: z.boolean(),
});

export type AccountDto = z.infer<typeof accountSchema>;

/** WalletLinkChallengeDto. */
export const challengeSchema = z.object({
  message: z.string().check(z.describe('The exact text to sign (EIP-191 personal_sign).')),
  nonce: z.string().check(z.regex(new RegExp(`^[0-9a-f]{${accountLimits.nonceBytes * 2}}$`))),
  expiresAt: z.iso.datetime(),
});

export type ChallengeDto = z.infer<typeof challengeSchema>;

/** POST /accounts/me/wallet body: step 1 of the link's processing order (link.ts) (422 naming the field). */
export const linkWalletBodySchema = z.object({
  address: z.string().check(z.regex(addressPattern, 'must be 0x followed by 40 hex characters')),
  signature: z.string().check(z.regex(accountPatterns.signature, 'must be 0x followed by 130 hex characters')),
});

export type LinkWalletBody = z.infer<typeof linkWalletBodySchema>;
