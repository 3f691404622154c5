import { recoverMessageAddress, type Hex } from 'viem';
import { AppError, isUniqueViolation, validationError } from '../errors';
import { transaction } from '../db';
import { addMetric, countLinkFailure, type WalletLinkFailure } from '@hatchery/platform/telemetry/metrics';
import { accountColumns, lockAccount, toAccountDto, type AccountRow } from './account';
import { liveChallenge } from './challenge';
import type { AccountDto, LinkWalletBody } from './wire';
import { addressPattern } from '../address';

/** The lowercase address that signed `message` (EIP-191 personal_sign), or undefined when no signer can be recovered. */
async function recoverSigner(message: string, signature: string): Promise<string | undefined> {
  try {
    return (await recoverMessageAddress({ message, signature: signature as Hex })).toLowerCase();
  } catch {
    return undefined;
  }
}

const walletTaken = () => new AppError('conflict', 'This wallet is already linked to another account.');

/** A link the processing order refuses: the problem the caller gets, with the reason the metric counts and the audit trail names. */
export class WalletLinkRefused extends AppError {
  constructor(
    readonly reason: WalletLinkFailure,
    problem: AppError,
  ) {
    super(problem.kind, problem.message, problem.fields, problem.headers, problem.extensions);
  }
}

/**
 * Steps 2–8 of the link's processing order (step 1 is the body's validation, wire.ts), in one transaction: the challenge
 * is deleted in the commit that links the wallet, and the account row lock
 * makes a second post of the same signature wait, then find no challenge (410).
 */
export async function linkWallet(accountId: string, body: LinkWalletBody, now = new Date()): Promise<AccountDto> {
  const refuse = (reason: WalletLinkFailure, problem: AppError) => {
    countLinkFailure(reason);
    return new WalletLinkRefused(reason, problem);
  };
  const account = await transaction(async (client) => {
    await lockAccount(client, accountId);
    const challenge = await liveChallenge(client, accountId, now);
    if (!challenge) throw refuse('noChallenge', new AppError('gone', 'There is no live challenge for this account; request a new nonce.'));
    const signer = await recoverSigner(challenge.message, body.signature);
    if (signer === undefined) throw refuse('badSignature', validationError('signature', 'no signer can be recovered from this signature'));
    if (signer !== body.address.toLowerCase())
      throw refuse('addressMismatch', validationError('address', 'is not the address that signed the current challenge'));
    if (!addressPattern.test(signer)) throw refuse('badSignature', validationError('address', 'the recovered address is not an EVM address'));
    await client.query('DELETE FROM hatchery.wallet_challenges WHERE account_id = $1', [accountId]);
    try {
      const { rows } = await client.query<AccountRow>(
        `UPDATE hatchery.accounts SET wallet_address = $2, wallet_linked_at = now() WHERE id = $1 RETURNING ${accountColumns}`,
        [accountId, signer],
      );
      return toAccountDto(rows[0]!);
    } catch (error) {
      if (isUniqueViolation(error)) throw refuse('walletTaken', walletTaken());
      throw error;
    }
  });
  addMetric('WalletsLinked');
  return account;
}
