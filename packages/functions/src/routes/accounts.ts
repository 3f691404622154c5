import { linkWalletBodySchema } from '@hatchery/core/accounts/wire';
import type { HttpRoute } from '../http-route';

/** Provisioning runs before every protected handler: 409 for an email of another account, 422 for an invalid email or nickname. */
const provisioningProblems = [409, 422] as const;

export const getMe = {
  method: 'GET',
  path: '/accounts/me',
  handler: 'packages/functions/src/http/get-me.handler',
  auth: 'jwt',
  summary: 'The caller’s account (created on the first authenticated request).',
  problems: [...provisioningProblems, 404],
} as const satisfies HttpRoute;

export const requestWalletNonce = {
  method: 'POST',
  path: '/accounts/me/wallet/nonce',
  handler: 'packages/functions/src/http/request-wallet-nonce.handler',
  auth: 'jwt',
  summary: 'A challenge to sign with the wallet to link (the same one while it lives); 409 when a wallet is linked.',
  problems: [...provisioningProblems, 429],
} as const satisfies HttpRoute;

export const linkWallet = {
  method: 'POST',
  path: '/accounts/me/wallet',
  handler: 'packages/functions/src/http/link-wallet.handler',
  auth: 'jwt',
  summary: 'Links the wallet that signed the current challenge (EIP-191 personal_sign of its message).',
  request: { body: linkWalletBodySchema },
  problems: [...provisioningProblems, 410, 429],
} as const satisfies HttpRoute;

export const unlinkWallet = {
  method: 'DELETE',
  path: '/accounts/me/wallet',
  handler: 'packages/functions/src/http/unlink-wallet.handler',
  auth: 'jwt',
  summary: 'Unlinks the wallet (idempotent).',
  problems: provisioningProblems,
} as const satisfies HttpRoute;

/** The four protected /accounts/me routes. */
export const accountRoutes = { getMe, requestWalletNonce, linkWallet, unlinkWallet } as const satisfies Record<string, HttpRoute>;
