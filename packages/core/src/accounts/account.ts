import { AppError } from '../errors';
import { query, transaction, type Queryable } from '../db';
import type { AccountDto } from './wire';

export interface AccountRow {
  id: string;
  email: string;
  nickname: string;
  status: AccountDto['status'];
  wallet_address: string | null;
}

export const accountColumns = 'id, email, nickname, status, wallet_address';

export function toAccountDto(row: AccountRow): AccountDto {
  return {
    id: row.id,
    email: row.email,
    nickname: row.nickname,
    status: row.status,
    ...(row.wallet_address !== null && { walletAddress: row.wallet_address }),
    walletLinked: row.wallet_address !== null,
  };
}

const accountNotFound = () => new AppError('notFound', 'No account exists for this identity.');

export async function findAccount(accountId: string, client?: Queryable): Promise<AccountRow | undefined> {
  const text = `SELECT ${accountColumns} FROM hatchery.accounts WHERE id = $1`;
  const rows = client ? (await client.query<AccountRow>(text, [accountId])).rows : await query<AccountRow>(text, [accountId]);
  return rows[0];
}

/** GET /accounts/me: 404 when the account does not exist. */
export async function getAccount(accountId: string): Promise<AccountDto> {
  const row = await findAccount(accountId);
  if (!row) throw accountNotFound();
  return toAccountDto(row);
}

/** Locks the account row for the rest of the transaction, so that challenge and link steps of one account run one at a time. */
export async function lockAccount(client: Queryable, accountId: string): Promise<AccountRow> {
  const { rows } = await client.query<AccountRow>(`SELECT ${accountColumns} FROM hatchery.accounts WHERE id = $1 FOR UPDATE`, [accountId]);
  if (!rows[0]) throw accountNotFound();
  return rows[0];
}

/**
 * DELETE /accounts/me/wallet: clears the address and its timestamp, and
 * answers the account and the wallet it unlinked, if one was linked (the row
 * lock makes that the wallet the update cleared). The update only touches a
 * linked account, so unlinking twice changes nothing (not even updated_at).
 */
export async function unlinkWallet(accountId: string): Promise<{ account: AccountDto; unlinkedWallet: string | undefined }> {
  return transaction(async (client) => {
    const before = await lockAccount(client, accountId);
    const { rows } = await client.query<AccountRow>(
      `UPDATE hatchery.accounts SET wallet_address = NULL, wallet_linked_at = NULL
       WHERE id = $1 AND (wallet_address IS NOT NULL OR wallet_linked_at IS NOT NULL)
       RETURNING ${accountColumns}`,
      [accountId],
    );
    return { account: toAccountDto(rows[0] ?? before), unlinkedWallet: before.wallet_address ?? undefined };
  });
}
