import type { Problem } from '@hatchery/core/errors';
import type { TestStack } from '../../support/stack';

export interface Caller {
  uid: string;
  email?: string;
  name?: string;
}

export interface Reply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  /** The same body, read as problem details (for non-2xx replies). */
  problem: Problem;
}

/** One HTTP call through the local gateway, with the body parsed (problem+json included). */
export async function call<T = Record<string, unknown>>(
  stack: TestStack,
  method: string,
  path: string,
  /** `rawBody` goes as `application/json` unless `contentType` names another type, or is null for none. */
  options: { token?: string; body?: unknown; rawBody?: string; contentType?: string | null } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (body !== undefined && options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  // Bytes rather than a string, for which fetch would declare text/plain itself.
  const sent = body !== undefined && options.contentType === null ? new TextEncoder().encode(body) : body;
  const response = await fetch(`${stack.url}${path}`, { method, headers, body: sent });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, body: parsed as T, problem: parsed as Problem };
}

export interface Challenge {
  message: string;
  nonce: string;
  expiresAt: string;
}

export interface Account {
  id: string;
  email: string;
  nickname: string;
  status: string;
  walletAddress?: string;
  walletLinked: boolean;
}

/** The four protected endpoints for one caller, with a token from the stack's identity provider. */
export async function client(stack: TestStack, caller: Caller) {
  const token = await stack.idp.signToken(caller);
  return {
    token,
    me: () => call<Account>(stack, 'GET', '/accounts/me', { token }),
    nonce: () => call<Challenge>(stack, 'POST', '/accounts/me/wallet/nonce', { token }),
    link: (body: unknown) => call<Account>(stack, 'POST', '/accounts/me/wallet', { token, body }),
    linkRaw: (rawBody: string) => call<Account>(stack, 'POST', '/accounts/me/wallet', { token, rawBody }),
    unlink: () => call<Account>(stack, 'DELETE', '/accounts/me/wallet', { token }),
  };
}

let counter = 0;
/** A caller no other test uses (every wallet POST counts against its own rate limit). */
export function freshCaller(prefix: string, extra: Partial<Caller> = {}): Caller {
  const uid = `${prefix}-${process.pid}-${++counter}`;
  return { uid, email: `${uid}@example.com`, name: `User ${counter}`, ...extra };
}

export async function accountRow(stack: TestStack, id: string) {
  const rows = await stack.sql<{
    id: string;
    email: string;
    nickname: string;
    status: string;
    wallet_address: string | null;
    wallet_linked_at: Date | null;
    created_at: Date;
    updated_at: Date;
  }>('SELECT * FROM hatchery.accounts WHERE id = $1', [id]);
  return rows[0];
}

export async function challengeRow(stack: TestStack, accountId: string) {
  const rows = await stack.sql<{ nonce: string; message: string; expires_at: Date }>('SELECT * FROM hatchery.wallet_challenges WHERE account_id = $1', [
    accountId,
  ]);
  return rows[0];
}
