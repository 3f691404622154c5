import type { HttpRoute } from '../routes';

/** The four protected /accounts/me routes (issue: accounts). Request/response schemas are filled in by that work. */
export const accountRoutes = {
  getMe: {
    method: 'GET',
    path: '/accounts/me',
    handler: 'packages/functions/src/http/get-me.handler',
    auth: 'jwt',
    summary: 'The caller’s account (created on the first authenticated request).',
  },
  requestWalletNonce: {
    method: 'POST',
    path: '/accounts/me/wallet/nonce',
    handler: 'packages/functions/src/http/request-wallet-nonce.handler',
    auth: 'jwt',
    summary: 'A challenge to sign with the wallet to link (the same one while it lives).',
  },
  linkWallet: {
    method: 'POST',
    path: '/accounts/me/wallet',
    handler: 'packages/functions/src/http/link-wallet.handler',
    auth: 'jwt',
    summary: 'Links the wallet that signed the current challenge.',
  },
  unlinkWallet: {
    method: 'DELETE',
    path: '/accounts/me/wallet',
    handler: 'packages/functions/src/http/unlink-wallet.handler',
    auth: 'jwt',
    summary: 'Unlinks the wallet (idempotent).',
  },
} as const satisfies Record<string, HttpRoute>;
