import { Wallet } from 'ethers';
import { createWalletClient, http, hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { demoAddress, demoSizes } from '@hatchery/local/demo-data';
import {
  createClient,
  filter,
  HatcheryProblem,
  isProblem,
  WalletGateError,
  type Eip1193Provider,
  type RouteName,
  type WalletSigner,
} from '../../../packages/client/src/index';
import { connectEvents } from '../../../packages/client/src/events';
import { indexer, waitFor } from '../realtime/support';
import { gate } from '../../support/gate';
import { managementProxy, type ManagementCall, type ManagementProxy, type Verdict } from '../../support/management-proxy';
import { startTestStack, type TestStack } from '../../support/stack';
import { ageChallenge, publicClient, userClient } from './support';

/**
 * What the management API proxy holds: each forgeFulfilled post to a wallet named by `hold`, in order, until
 * `release()`. A fulfilment's event as a slow listener or a loaded machine delivers it, after the reads around it.
 */
function heldForgeEvents() {
  let holding: string | undefined;
  const waiting: Array<() => void> = [];
  return {
    hold: (wallet: string) => void (holding = wallet.toLowerCase()),
    held: () => waiting.length,
    release() {
      holding = undefined;
      for (const forward of waiting.splice(0)) forward();
    },
    judge: (call: ManagementCall): Verdict | Promise<Verdict> =>
      holding && call.body.includes('"target":"forgeFulfilled"') && call.body.includes(holding)
        ? new Promise((resolve) => waiting.push(() => resolve('forward')))
        : 'forward',
  };
}

/** The hub connections in a wallet's group, as the fan-out reads them. */
async function groupSize(wallet: string): Promise<number> {
  let size = 0;
  for await (const page of connectionStore().group(wallet.toLowerCase())) size += page.length;
  return size;
}

let stack: TestStack;
let writer: ReturnType<typeof indexer>;
let proxy: ManagementProxy;
const forgeEvents = heldForgeEvents();

beforeAll(async () => {
  proxy = await managementProxy(() => stack.url, forgeEvents.judge);
  stack = await startTestStack({ demoData: demoSizes.demo, managementEndpoint: proxy.url });
  writer = indexer(stack);
});
afterAll(async () => {
  await writer?.end();
  await stack?.stop();
  proxy?.close();
});

const newWallet = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

/** What a browser wallet does with personal_sign: the message arrives as hex of its UTF-8 bytes. */
function eip1193(wallet: PrivateKeyAccount, claimed: string = wallet.address): Eip1193Provider & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    request: async ({ method, params }) => {
      calls.push(method);
      if (method === 'eth_requestAccounts') return [claimed];
      if (method === 'personal_sign') return wallet.signMessage({ message: { raw: hexToBytes((params as [Hex, string])[0]) } });
      throw Object.assign(new Error(`${method} is not supported`), { code: 4200 });
    },
  };
}

describe('every route of the table, typed, against the local stack', () => {
  it('answers each with a body the server’s own schema accepts', async () => {
    const owner = demoAddress(7);
    const client = await userClient(stack, 'routes');
    const { api } = client;
    const calls: { [K in RouteName]: () => Promise<unknown> } = {
      listEditions: () => api.listEditions({ filter: filter.editions.active.eq(true), orderBy: (e) => e.rarity.desc(), pageSize: 5 }),
      getMe: () => api.getMe(),
      requestWalletNonce: () => api.requestWalletNonce(),
      linkWallet: () => client.linkWallet(newWallet()),
      unlinkWallet: () => api.unlinkWallet(),
      listAccountNfts: () => api.listAccountNfts({ address: owner, filter: (f) => f.staked.eq(false), pageSize: 3 }),
      listListings: () => api.listListings({ filter: filter.listings.status.eq('Active').and(filter.listings.price.gte(1n)), page: 2, pageSize: 2 }),
      listAccountStaking: () => api.listAccountStaking({ address: owner }),
      listAccountForgeRequests: () => api.listAccountForgeRequests({ address: demoAddress(1), filter: (f) => f.status.eq('Fulfilled') }),
      getAccountReferral: () => api.getAccountReferral({ address: demoAddress(1) }),
      listSales: () => api.listSales({ orderBy: (f) => [f.blockNumber.asc(), f.tokenId.desc()], pageSize: 4 }),
      getSummary: () => api.getSummary(),
      health: () => api.health(),
      negotiateHub: () => api.negotiateHub({ negotiateVersion: 1 }),
      listEvents: () => api.listEvents({ type: ['forge.fulfilled', 'sale.completed'], finality: 'finalized', pageSize: 10 }),
    };
    // The account's own calls one after the other, in the order a client makes them (a nonce asked for after the link
    // is refused with 409, and the account read after it is linked); the reads all at once.
    const inOrder: RouteName[] = ['getMe', 'requestWalletNonce', 'linkWallet', 'unlinkWallet'];
    const results = {} as Record<RouteName, any>;
    for (const name of inOrder) results[name] = await calls[name]();
    const reads = Object.entries(calls).filter(([name]) => !inOrder.includes(name as RouteName));
    Object.assign(results, Object.fromEntries(await Promise.all(reads.map(async ([name, run]) => [name, await run()] as const))));
    expect(results.getMe).toMatchObject({ id: client.uid, walletLinked: false });
    expect(results.linkWallet).toMatchObject({ ok: true });
    expect(results.listEditions.items.length).toBeGreaterThan(0);
    expect(results.listEditions.items.every((edition: { active: boolean }) => edition.active)).toBe(true);
    expect(results.listListings).toMatchObject({ page: 2, pageSize: 2 });
    expect(results.getSummary.salesCount).toBeGreaterThan(0);
    expect(results.negotiateHub.negotiateVersion).toBe(1);

    const [row] = await stack.sql<{ count: number }>(`SELECT count(*)::int AS count FROM indexer.nfts WHERE owner = $1 AND NOT burned AND NOT staked`, [owner]);
    expect(row!.count).toBeGreaterThan(0);
    expect(results.listAccountNfts.totalCount).toBe(row!.count);
  });

  it('walks a whole list by cursor: every sale once, in the list’s order, with a filter and an order of its own', async () => {
    const client = publicClient(stack);
    const seen: { tokenId: string; blockNumber: string }[] = [];
    for await (const sale of client.walk('listSales', { filter: (f) => f.seller.eq(demoAddress(3)), orderBy: (f) => f.blockNumber.asc(), pageSize: 7 }))
      seen.push(sale);
    const rows = await stack.sql<{ tokenId: string; blockNumber: string }>(
      `SELECT token_id::text AS "tokenId", block_number::text AS "blockNumber" FROM indexer.sales WHERE seller = $1 ORDER BY block_number ASC, id DESC`,
      [demoAddress(3)],
    );
    expect(rows.length).toBeGreaterThan(7);
    expect(seen.map(({ tokenId, blockNumber }) => ({ tokenId, blockNumber }))).toEqual(rows);
  });

  it('throws problems typed, with the per-field errors', async () => {
    const error = await publicClient(stack)
      .api.listEditions({ filter: 'nope=1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HatcheryProblem);
    expect(error).toMatchObject({ status: 422, errors: { filter: [expect.stringContaining('nope')] } });
    await expect(publicClient(stack).api.getMe()).rejects.toMatchObject({ status: 401 });
  });

  it('finds the same rows with an escaped builder value as with the hand-written string', async () => {
    const names = ['a,b|c', '(x)\\y', 'p/iq', '=eq', '*star', ' lead'];
    await stack.sql(
      `INSERT INTO indexer.editions SELECT 900000 + i, n, '', 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, true FROM unnest($1::text[]) WITH ORDINALITY AS t(n, i)`,
      [names],
    );
    const { api } = publicClient(stack);
    const handWritten = ['name=a\\,b\\|c', 'name=\\(x\\)\\\\y', 'name=p\\/iq', 'name=\\=eq', 'name=\\*star', 'name=\\ lead'];
    for (const [index, name] of names.entries()) {
      const built = await api.listEditions({ filter: (e) => e.name.eq(name) });
      const raw = await api.listEditions({ filter: handWritten[index] });
      expect(built.items.map((edition) => edition.name)).toEqual([name]);
      expect(built).toEqual(raw);
    }
    const contains = await api.listEditions({ filter: (e) => e.name.contains('|C', { ignoreCase: true }).or(e.name.endsWith(')\\y')) });
    expect(contains.items.map((edition) => edition.name).sort()).toEqual(['(x)\\y', 'a,b|c']);
  });
});

describe('linkWallet', () => {
  const signers: Array<[string, (wallet: PrivateKeyAccount) => WalletSigner]> = [
    ['a viem account', (wallet) => wallet],
    ['a viem WalletClient', (wallet) => createWalletClient({ account: wallet, transport: http('http://127.0.0.1:9') })],
    ['an ethers Signer', (wallet) => new Wallet(walletKeys.get(wallet)!)],
    ['an EIP-1193 provider', (wallet) => eip1193(wallet)],
  ];
  const walletKeys = new Map<PrivateKeyAccount, Hex>();
  const keyedWallet = () => {
    const key = generatePrivateKey();
    const wallet = privateKeyToAccount(key);
    walletKeys.set(wallet, key);
    return wallet;
  };

  it.each(signers)('links with %s, and requireWalletLinked then lets chain writes through', async (_kind, signerOf) => {
    const client = await userClient(stack, 'link');
    const wallet = keyedWallet();
    await expect(client.requireWalletLinked()).rejects.toMatchObject({ reason: 'no-wallet' });
    const outcome = await client.linkWallet(signerOf(wallet));
    expect(outcome).toMatchObject({ ok: true, challenges: 1, account: { walletLinked: true, walletAddress: wallet.address.toLowerCase() } });
    await expect(client.requireWalletLinked({ address: wallet.address })).resolves.toMatchObject({ walletAddress: wallet.address.toLowerCase() });
    await expect(client.requireWalletLinked({ address: newWallet().address })).rejects.toMatchObject({ reason: 'other-wallet' });
  });

  it('signs a new challenge after a 410 for a replayed one', async () => {
    const client = await userClient(stack, 'replay');
    const wallet = newWallet();
    let replayed = false;
    // The first challenge is used up while the wallet signs it (linked, then unlinked), so the link that follows is a replay.
    const signer: Eip1193Provider = {
      request: async (args) => {
        const signature = await eip1193(wallet).request(args);
        if (args.method === 'personal_sign' && !replayed) {
          replayed = true;
          await client.api.linkWallet({ address: wallet.address, signature: signature as string });
          await client.api.unlinkWallet();
        }
        return signature;
      },
    };
    await expect(client.linkWallet(signer)).resolves.toMatchObject({ ok: true, challenges: 2, account: { walletAddress: wallet.address.toLowerCase() } });
  });

  it('answers a replayed signature with the typed 410', async () => {
    const client = await userClient(stack, 'replay');
    const wallet = newWallet();
    const { message } = await client.api.requestWalletNonce();
    const link = { address: wallet.address, signature: await wallet.signMessage({ message }) };
    await client.api.linkWallet(link);
    await client.api.unlinkWallet();
    const error = await client.api.linkWallet(link).catch((caught: unknown) => caught);
    expect(isProblem(error, 410)).toBe(true);
    expect(error).toMatchObject({ status: 410, instance: '/accounts/me/wallet' });
  });

  it('signs a new challenge when the first expired while the wallet was open', async () => {
    const client = await userClient(stack, 'expired');
    const wallet = newWallet();
    let aged = 0;
    const signer = {
      address: wallet.address,
      signMessage: async ({ message }: { message: string }) => {
        if (aged++ === 0) await ageChallenge(stack, client.uid, 6 * 60_000);
        return wallet.signMessage({ message });
      },
    };
    await expect(client.linkWallet(signer)).resolves.toMatchObject({ ok: true, challenges: 2 });
    // With no renewal allowed, the expiry is the outcome (another account: five wallet POSTs a minute each).
    const other = await userClient(stack, 'expired');
    const otherSigner = {
      address: wallet.address,
      signMessage: async ({ message }: { message: string }) => (await ageChallenge(stack, other.uid, 6 * 60_000), wallet.signMessage({ message })),
    };
    await expect(other.linkWallet(otherSigner, { renewals: 0 })).resolves.toMatchObject({ ok: false, reason: 'challenge-expired', problem: { status: 410 } });
  });

  it('reports 409 and 422 as outcomes', async () => {
    const wallet = newWallet();
    const first = await userClient(stack, 'first');
    const second = await userClient(stack, 'second');
    await expect(first.linkWallet(wallet)).resolves.toMatchObject({ ok: true });
    await expect(first.linkWallet(wallet)).resolves.toMatchObject({ ok: false, reason: 'account-has-wallet', problem: { status: 409 } });
    await expect(second.linkWallet(wallet)).resolves.toMatchObject({ ok: false, reason: 'address-taken', problem: { status: 409 } });
    // A wallet that claims one address and signs with another key.
    await expect(second.linkWallet(eip1193(newWallet(), wallet.address))).resolves.toMatchObject({ ok: false, reason: 'invalid', problem: { status: 422 } });
  });

  it('refuses chain writes when signed out', async () => {
    const error = await publicClient(stack)
      .requireWalletLinked()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WalletGateError);
    expect(error).toMatchObject({ reason: 'signed-out' });
  });

  it('throws a 429 it will not wait for as a typed problem with the Retry-After', async () => {
    const token = await stack.idp.signToken({ uid: `limited-${process.pid}`, email: `limited-${process.pid}@example.com` });
    // maxDelayMs 0: no wait is short enough, so the first 429 is thrown, whatever part of the minute it falls in.
    const { api } = createClient({ baseUrl: stack.url, getToken: () => token, retry: { maxDelayMs: 0 } });
    let error: unknown;
    // Five wallet POSTs a minute per account; eleven reach a sixth in one window even if they straddle two.
    for (let i = 0; i < 11 && !error; i++)
      error = await api.requestWalletNonce().then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(HatcheryProblem);
    expect(error).toMatchObject({ status: 429, instance: '/accounts/me/wallet/nonce' });
    expect((error as HatcheryProblem).retryAfterMs).toBeLessThanOrEqual(60_000);
  });
});

describe('connectEvents over @microsoft/signalr', () => {
  it('restores subscriptions after the WebSocket side drops every connection, and delivers forgeFulfilled', async () => {
    const wallet = `0x${'c1'.repeat(20)}`;
    const events = await connectEvents({ baseUrl: stack.url, reconnectDelaysMs: [0, 200] });
    try {
      const markets: { count: number; maxBlock: string }[] = [];
      events.onMarketChanged((event) => markets.push(event), { debounceMs: 100 });
      await events.subscribe(wallet);
      const before = [...stack.hub.connections.keys()];
      const restored = new Promise<unknown>((resolve) => events.onRestored(resolve));
      for (const connection of stack.hub.connections.values()) connection.socket.close(1012, 'Service Restart');
      expect(await restored).toBeUndefined();
      expect(events.subscriptions).toEqual(new Set([wallet]));
      // A new connection, which the hub knows in no group until the client restores its subscription.
      expect([...stack.hub.connections.keys()].filter((id) => before.includes(id))).toEqual([]);

      const received = new Promise((resolve) => events.onForgeFulfilled(resolve));
      const fulfilment = await writer.fulfilFor(wallet);
      expect(await received).toEqual(fulfilment);

      await writer.listToken();
      const snapshot = await writer.snapshot();
      await waitFor(
        () => markets.some(({ count, maxBlock }) => JSON.stringify({ count, maxBlock }) === JSON.stringify(snapshot)),
        'the debounced marketChanged with the new snapshot',
      );
    } finally {
      await events.close();
    }
  });

  it('raises once a fulfilment committed while the first read is held, though that read finds it and its event comes after', async () => {
    const wallet = `0x${'c3'.repeat(20)}`;
    const firstRead = gate();
    const client = createClient({
      baseUrl: stack.url,
      fetch: async (input, init) => {
        if (String(input).includes('status%3DFulfilled')) await firstRead.pass();
        return fetch(input, init);
      },
    });
    const events = await connectEvents({ baseUrl: stack.url, client });
    forgeEvents.hold(wallet);
    try {
      const raised: unknown[] = [];
      events.onForgeFulfilled((event) => raised.push(event));
      const subscribed = events.subscribe(wallet);
      await firstRead.reached;
      await waitFor(async () => (await groupSize(wallet)) === 1, 'the connection in the wallet’s group');
      const fulfilment = await writer.fulfilFor(wallet);
      await waitFor(() => forgeEvents.held() === 1, 'its forgeFulfilled on the way to the connection, held');
      firstRead.open();
      await subscribed;
      // The first read is in, and found the fulfilment: the wait answers from it while the event is still held.
      const { requestId, tokenId, editionId } = fulfilment;
      expect(await events.waitForForgeFulfilled(wallet, requestId, { timeoutMs: 0 })).toEqual({ requestId, tokenId, editionId, source: 'api' });
      forgeEvents.release();
      await waitFor(() => raised.length === 1, 'the forgeFulfilled of the fulfilment committed during the first read');
      // Once: the next fulfilment's event is the next thing raised.
      const next = await writer.fulfilFor(wallet);
      await waitFor(() => raised.length === 2, 'the next forgeFulfilled');
      expect(raised).toEqual([fulfilment, next]);
    } finally {
      forgeEvents.release();
      await events.close();
    }
  });

  it('falls back to the forge-requests endpoint when the event went by before the wait began', async () => {
    const wallet = `0x${'c2'.repeat(20)}`;
    const events = await connectEvents({ baseUrl: stack.url });
    const watcher = await connectEvents({ baseUrl: stack.url });
    try {
      await watcher.subscribe(wallet);
      const sent = new Promise((resolve) => watcher.onForgeFulfilled(resolve));
      const fulfilment = await writer.fulfilFor(wallet);
      // The event has gone out (to the watcher) before `events` subscribes: only the endpoint can tell it.
      await sent;
      const { requestId, tokenId, editionId } = fulfilment;
      await expect(events.waitForForgeFulfilled(wallet, requestId, { timeoutMs: 300 })).resolves.toEqual({ requestId, tokenId, editionId, source: 'api' });
    } finally {
      await watcher.close();
      await events.close();
    }
  });
});
