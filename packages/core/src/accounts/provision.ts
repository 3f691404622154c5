import { AppError, validationError } from '../errors';
import { query } from '../db';
import { accountPatterns } from './limits';
import { addMetric } from '@hatchery/platform/telemetry/metrics';
import { findAccount } from './account';
import type { Identity } from './identity';

/** Provisioning's email rule: lowercase, then the pattern; a missing email is invalid too. */
function normalizeEmail(email: string | undefined): string {
  const normalized = email?.toLowerCase();
  if (!normalized || !accountPatterns.email.test(normalized)) throw validationError('email', 'the token carries no valid email address');
  return normalized;
}

/**
 * Rules 6 and 7: the `name` claim, without surrounding whitespace (as the
 * system Hatchery replaces trims it), when it is a valid nickname; else the
 * email's local part with invalid characters replaced by `_`.
 */
function deriveNickname(name: string | undefined, email: string): string {
  const trimmed = name?.trim();
  if (trimmed !== undefined && accountPatterns.nickname.test(trimmed)) return trimmed;
  const localPart = email.slice(0, email.lastIndexOf('@'));
  const nickname = localPart.replace(accountPatterns.nicknameForbiddenCharacter, '_');
  if (!accountPatterns.nickname.test(nickname)) {
    throw validationError('nickname', 'neither the name nor the email of the token gives a nickname of 3 to 20 letters, digits, spaces or underscores');
  }
  return nickname;
}

interface NewAccount {
  id: string;
  email: string;
  nickname: string;
}

function newAccount(identity: Identity): NewAccount {
  const email = normalizeEmail(identity.email);
  return { id: identity.userId, email, nickname: deriveNickname(identity.name, identity.email ?? email) };
}

const emailTaken = () => new AppError('conflict', 'The email of this identity already belongs to another account.');

/**
 * Makes sure the caller has an account (rules 1–8), and answers whether this
 * call created it. An existing account is left as it is. The insert names no
 * conflict target, so it absorbs a concurrent first request's insert
 * whichever unique index that race trips first; an insert that did nothing
 * and left no account of this id means the email is another account's: 409,
 * on every request until that record is gone.
 */
export async function provisionAccount(identity: Identity): Promise<boolean> {
  if (await findAccount(identity.userId)) return false;
  const account = newAccount(identity);
  const inserted = await query(
    `INSERT INTO hatchery.accounts (id, email, nickname, status) VALUES ($1, $2, $3, 'ACTIVE')
     ON CONFLICT DO NOTHING RETURNING id`,
    [account.id, account.email, account.nickname],
  );
  if (inserted.length > 0) {
    addMetric('AccountsProvisioned');
    return true;
  }
  if (await findAccount(identity.userId)) return false;
  addMetric('ProvisioningConflicts');
  throw emailTaken();
}
