import type { ApiClient, RouteOutput } from './api.js';
import { type HatcheryProblem, isProblem } from './http.js';

type Hex = `0x${string}`;

/** Any signer this module takes; each is recognised by shape, so none of their libraries is loaded. */
export type WalletSigner = EthersSignerLike | ViemWalletClientLike | ViemAccountLike | Eip1193Provider;

/** An ethers v6 Signer (a Wallet, or a BrowserProvider's getSigner()). */
export interface EthersSignerLike {
  getAddress(): Promise<string>;
  signMessage(message: string): Promise<string>;
}
/** A viem WalletClient; its own account, or else the wallet's first address, signs. */
export interface ViemWalletClientLike {
  account?: { address: Hex } | undefined;
  getAddresses(): Promise<readonly Hex[]>;
  /** `account` is the client's own account or an address of its wallet; `never` lets any viem account type through. */
  signMessage(args: { account: never; message: string }): Promise<Hex>;
}
/** A viem account (privateKeyToAccount, mnemonicToAccount, toAccount). */
export interface ViemAccountLike {
  address: Hex;
  signMessage(args: { message: string }): Promise<Hex>;
}
/** An EIP-1193 provider such as `window.ethereum`: `personal_sign` signs. */
export interface Eip1193Provider {
  request(args: { method: string; params?: readonly unknown[] }): Promise<unknown>;
}

interface Signing {
  address: string;
  sign(message: string): Promise<string>;
}

const has = <K extends string>(value: object, key: K): value is Record<K, (...args: never[]) => unknown> =>
  typeof (value as Record<string, unknown>)[key] === 'function';

const utf8Hex = (text: string): Hex => `0x${Array.from(new TextEncoder().encode(text), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;

/** The signer's address and an EIP-191 personal_sign over a message, whatever the signer's kind. */
export async function signingWith(signer: WalletSigner, address?: string): Promise<Signing> {
  // ethers Wallets also have an `address` property, so they are told apart by getAddress first.
  if (has(signer, 'getAddress') && has(signer, 'signMessage')) {
    const ethers = signer as EthersSignerLike;
    return { address: await ethers.getAddress(), sign: (message) => ethers.signMessage(message) };
  }
  if (has(signer, 'getAddresses') && has(signer, 'signMessage')) {
    const client = signer as ViemWalletClientLike;
    const account = client.account ?? (address as Hex | undefined) ?? (await client.getAddresses())[0];
    if (!account) throw new Error('The wallet client has no account');
    return { address: typeof account === 'string' ? account : account.address, sign: (message) => client.signMessage({ account: account as never, message }) };
  }
  if ('address' in signer && has(signer, 'signMessage')) {
    const account = signer as ViemAccountLike;
    return { address: account.address, sign: (message) => account.signMessage({ message }) };
  }
  if (has(signer, 'request')) {
    const provider = signer as Eip1193Provider;
    const chosen = address ?? ((await provider.request({ method: 'eth_requestAccounts' })) as string[] | undefined)?.[0];
    if (!chosen) throw new Error('The wallet provider gave no account');
    return { address: chosen, sign: async (message) => (await provider.request({ method: 'personal_sign', params: [utf8Hex(message), chosen] })) as string };
  }
  throw new TypeError('Not a wallet signer: expected a viem WalletClient or account, an ethers Signer or an EIP-1193 provider');
}

export type Account = RouteOutput<'getMe'>;
export type LinkedAccount = Account & { walletLinked: true; walletAddress: string };

export type LinkOutcome =
  | { ok: true; account: Account /** Challenges signed: 2 when the first had expired or was used (410). */; challenges: number }
  /** 409 on the nonce: this account has a wallet already (unlink it first). */
  | { ok: false; reason: 'account-has-wallet'; problem: HatcheryProblem }
  /** 409 on the link: another account holds this address. */
  | { ok: false; reason: 'address-taken'; problem: HatcheryProblem }
  /** 422: the signature does not recover to the address, or a value is malformed (`problem.errors` names it). */
  | { ok: false; reason: 'invalid'; problem: HatcheryProblem }
  /** 410 again after a fresh challenge. */
  | { ok: false; reason: 'challenge-expired'; problem: HatcheryProblem };

export interface LinkOptions {
  /** The account to use when the signer holds several (EIP-1193, viem WalletClient without an account). */
  address?: string;
  /** Fresh challenges to try after a 410. */
  renewals?: number;
  signal?: AbortSignal;
}

/**
 * The whole link: a challenge (the same one while it lives), `personal_sign`
 * of its message, then the link. A 410 means the challenge expired or was
 * used: a new one is signed. 409 and 422 come back as outcomes; anything
 * else (401, 429 past its retries, a refused signature) is thrown.
 */
export async function linkWallet(client: ApiClient, signer: WalletSigner, options: LinkOptions = {}): Promise<LinkOutcome> {
  const { api } = client;
  const signing = await signingWith(signer, options.address);
  const call = { signal: options.signal };
  for (let challenges = 1; ; challenges++) {
    let challenge: Awaited<ReturnType<typeof api.requestWalletNonce>>;
    try {
      challenge = await api.requestWalletNonce(undefined, call);
    } catch (error) {
      if (isProblem(error, 409)) return { ok: false, reason: 'account-has-wallet', problem: error };
      throw error;
    }
    const signature = await signing.sign(challenge.message);
    try {
      return { ok: true, account: await api.linkWallet({ address: signing.address, signature }, call), challenges };
    } catch (error) {
      if (isProblem(error, 409)) return { ok: false, reason: 'address-taken', problem: error };
      if (isProblem(error, 422)) return { ok: false, reason: 'invalid', problem: error };
      if (!isProblem(error, 410)) throw error;
      if (challenges > (options.renewals ?? 1)) return { ok: false, reason: 'challenge-expired', problem: error };
    }
  }
}

/** Why a chain write must wait. */
export class WalletGateError extends Error {
  constructor(
    readonly reason: 'signed-out' | 'no-wallet' | 'other-wallet',
    readonly account?: Account,
  ) {
    super(
      reason === 'signed-out'
        ? 'Sign in before writing to the chain'
        : reason === 'no-wallet'
          ? 'Link a wallet before writing to the chain'
          : 'The wallet about to sign is not the one linked to this account',
    );
    this.name = 'WalletGateError';
  }
}

/**
 * The client-side gate (docs/client.md) for chain writes: a signed-in identity with a
 * linked wallet (and, given `address`, that very wallet). Returns the account.
 */
export async function requireWalletLinked(client: ApiClient, options: { address?: string; signal?: AbortSignal } = {}): Promise<LinkedAccount> {
  if (!(await client.options.getToken?.())) throw new WalletGateError('signed-out');
  let account: Account;
  try {
    account = await client.api.getMe(undefined, { signal: options.signal });
  } catch (error) {
    if (isProblem(error, 401)) throw new WalletGateError('signed-out');
    throw error;
  }
  if (!account.walletLinked || !account.walletAddress) throw new WalletGateError('no-wallet', account);
  if (options.address && options.address.toLowerCase() !== account.walletAddress) throw new WalletGateError('other-wallet', account);
  return account as LinkedAccount;
}
