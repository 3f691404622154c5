import { randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import { accountsSettings } from '@hatchery/platform/config/accounts';
import { transaction, type Queryable } from '../db';
import { accountLimits } from './limits';
import { addMetric } from '@hatchery/platform/telemetry/metrics';
import { lockAccount } from './account';
import type { ChallengeDto } from './wire';

interface ChallengeRow {
  nonce: string;
  message: string;
  expires_at: Date;
}

/** `Issued At` is `YYYY-MM-DDTHH:mm:ssZ`. */
const formatIssuedAt = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The three parts of the challenge (docs/http-api.md, Linking a wallet locally): the fixed sentence, a blank line, then account, nonce and time. */
function challengeMessage(parts: { serviceName: string; accountId: string; nonce: string; issuedAt: Date }): string {
  return [
    `Link this wallet to your ${parts.serviceName} account`,
    '',
    `Account: ${parts.accountId}`,
    `Nonce: ${parts.nonce}`,
    `Issued At: ${formatIssuedAt(parts.issuedAt)}`,
  ].join('\n');
}

const toChallengeDto = (row: ChallengeRow): ChallengeDto => ({ message: row.message, nonce: row.nonce, expiresAt: row.expires_at.toISOString() });

/** The account's challenge while it lives (`now` before its expiry), else undefined. */
export async function liveChallenge(client: Queryable, accountId: string, now: Date): Promise<ChallengeRow | undefined> {
  const { rows } = await client.query<ChallengeRow>(
    'SELECT nonce, message, expires_at FROM hatchery.wallet_challenges WHERE account_id = $1 AND expires_at > $2',
    [accountId, now],
  );
  return rows[0];
}

/**
 * POST /accounts/me/wallet/nonce: 409 when a wallet is linked; the live
 * challenge when there is one; otherwise a new one replacing any expired one.
 * The account row lock makes concurrent requests of one account agree on one challenge.
 */
export async function requestChallenge(accountId: string, now = new Date(), serviceName = accountsSettings().SERVICE_NAME): Promise<ChallengeDto> {
  const { challenge, newlyIssued } = await transaction(async (client) => {
    const account = await lockAccount(client, accountId);
    if (account.wallet_address !== null) throw new AppError('conflict', 'A wallet is already linked to this account; unlink it first.');
    const live = await liveChallenge(client, accountId, now);
    if (live) return { challenge: toChallengeDto(live), newlyIssued: false };
    // Whole seconds, so the message's `Issued At` and `expiresAt` describe the same instant.
    const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const nonce = randomBytes(accountLimits.nonceBytes).toString('hex');
    const row: ChallengeRow = {
      nonce,
      message: challengeMessage({ serviceName, accountId, nonce, issuedAt }),
      expires_at: new Date(accountLimits.challengeLifetimeMs + issuedAt.getTime()),
    };
    await client.query(
      `INSERT INTO hatchery.wallet_challenges (account_id, nonce, message, expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id) DO UPDATE SET nonce = EXCLUDED.nonce, message = EXCLUDED.message,
         expires_at = EXCLUDED.expires_at, created_at = now()`,
      [accountId, row.nonce, row.message, row.expires_at],
    );
    return { challenge: toChallengeDto(row), newlyIssued: true };
  });
  // Counted once committed, so a retried transaction counts once.
  if (newlyIssued) addMetric('ChallengesIssued');
  return challenge;
}
