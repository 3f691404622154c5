import type { AccountDto } from '@hatchery/core/accounts/wire';
import { logger } from '@hatchery/platform/telemetry/logger';
import type { WalletLinkFailure } from '@hatchery/platform/telemetry/metrics';

/**
 * The audit trail (docs/operating.md, Audit trail): one INFO line of its own
 * per security event, whatever level the request's own line takes. Each names
 * the account and the wallet where there is one; the request's context adds
 * `requestId` and `route`. No function here takes a token, a signature or a
 * challenge, so no line of the trail can carry one.
 */
export const securityEvents = {
  accountProvisioned: 'account provisioned',
  walletLinked: 'wallet linked',
  walletUnlinked: 'wallet unlinked',
  walletLinkRefused: 'wallet link refused',
  tokenRefused: 'token refused',
} as const;

/** Why a bearer token was refused (authenticate.ts): what the audit line's `reason` says. */
export const tokenRefusals = [
  'missing',
  'malformed',
  'badSignature',
  'unknownKey',
  'wrongIssuer',
  'wrongAudience',
  'expired',
  'notYetValid',
  'brokenRule',
  'invalid',
] as const;

export type TokenRefusal = (typeof tokenRefusals)[number];

const audit = (message: (typeof securityEvents)[keyof typeof securityEvents], fields: Record<string, string | undefined>) => logger().info(fields, message);

export const accountProvisioned = (accountId: string) => audit(securityEvents.accountProvisioned, { accountId });

export const walletLinked = (account: AccountDto) => audit(securityEvents.walletLinked, { accountId: account.id, wallet: account.walletAddress });

export const walletUnlinked = (accountId: string, wallet: string) => audit(securityEvents.walletUnlinked, { accountId, wallet });

/** `wallet` is the address the caller claimed, lowercase as a linked one is. */
export const walletLinkRefused = (accountId: string, wallet: string, reason: WalletLinkFailure) =>
  audit(securityEvents.walletLinkRefused, { accountId, wallet: wallet.toLowerCase(), reason });

/** No account: a refused token's claims are not the caller's word. */
export const tokenRefused = (reason: TokenRefusal) => audit(securityEvents.tokenRefused, { reason });
