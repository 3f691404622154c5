import { Wallet } from 'ethers';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack';
import { accountRow, challengeRow, client, freshCaller, type Challenge } from './support';

/** Every wallet POST counts against the caller's limit of 5 a minute, so each case below uses its own callers. */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const newWallet = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());
const sign = (wallet: PrivateKeyAccount, challenge: Challenge) => wallet.signMessage({ message: challenge.message });
const newApi = (prefix: string) => client(stack, freshCaller(prefix));

/** Moves the caller's challenge back in time as if `ms` had passed. */
const age = (accountId: string, ms: number) =>
  stack.sql(
    `UPDATE hatchery.wallet_challenges SET created_at = created_at - make_interval(secs => $2), expires_at = expires_at - make_interval(secs => $2) WHERE account_id = $1`,
    [accountId, ms / 1000],
  );

const fiveMinutes = 5 * 60_000;

describe('wallet state table', () => {
  it('no challenge → POST nonce → challenge active: a new 16-byte nonce, the exact three-part message, 5 minutes to live', async () => {
    const api = await newApi('nonce');
    const before = Date.now();
    const reply = await api.nonce();
    expect(reply.status).toBe(200);
    const { message, nonce, expiresAt } = reply.body;
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    const accountId = (await api.me()).body.id;
    const lines = message.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('Link this wallet to your Hatchery account');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe(`Account: ${accountId}`);
    expect(lines[3]).toBe(`Nonce: ${nonce}`);
    expect(lines[4]).toMatch(/^Issued At: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const messageIssuedAt = Date.parse(lines[4]!.slice('Issued At: '.length));
    expect(Date.parse(expiresAt) - messageIssuedAt).toBe(fiveMinutes);
    expect(messageIssuedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(messageIssuedAt).toBeLessThanOrEqual(Date.now());
    expect(expiresAt).toBe(new Date(expiresAt).toISOString());
    expect(await challengeRow(stack, accountId)).toMatchObject({ nonce, message, expires_at: new Date(expiresAt) });
  });

  it('challenge active → POST nonce → the same challenge, unchanged', async () => {
    const api = await newApi('same');
    const first = await api.nonce();
    const second = await api.nonce();
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await stack.sql('SELECT 1 FROM hatchery.wallet_challenges WHERE account_id = $1', [(await api.me()).body.id])).toHaveLength(1);
  });

  it('challenge active → 5 minutes elapse → expired: linking is 410; POST nonce makes a new one that links', async () => {
    const api = await newApi('expiry');
    const wallet = newWallet();
    const old = (await api.nonce()).body;
    const accountId = (await api.me()).body.id;
    await age(accountId, fiveMinutes);
    const late = await api.link({ address: wallet.address, signature: await sign(wallet, old) });
    expect(late.status).toBe(410);
    expect(late.problem).toMatchObject({ status: 410, title: 'Gone' });
    expect(late.problem.detail).toMatch(/nonce/);
    const requested = Date.now();
    const fresh = await api.nonce();
    expect(fresh.status).toBe(200);
    expect(fresh.body.nonce).not.toBe(old.nonce);
    expect(fresh.body.message).not.toBe(old.message);
    // 5 minutes from its issue, which came while it was asked for (its message names the second).
    expect(Date.parse(fresh.body.expiresAt)).toBeGreaterThanOrEqual(Math.floor(requested / 1000) * 1000 + fiveMinutes);
    expect(Date.parse(fresh.body.expiresAt)).toBeLessThanOrEqual(Date.now() + fiveMinutes);
    const linked = await api.link({ address: wallet.address, signature: await sign(wallet, fresh.body) });
    expect(linked.status).toBe(200);
  });

  it('a challenge 10 s short of 5 minutes old is still the live one', async () => {
    const api = await newApi('almost');
    const first = (await api.nonce()).body;
    await age((await api.me()).body.id, fiveMinutes - 10_000);
    const again = (await api.nonce()).body;
    expect({ nonce: again.nonce, message: again.message }).toEqual({ nonce: first.nonce, message: first.message });
    expect(Date.parse(again.expiresAt)).toBe(Date.parse(first.expiresAt) - (fiveMinutes - 10_000));
  });

  it('challenge active → POST wallet (viem signature, checksummed address) → wallet linked, challenge removed, stored lowercase as recovered', async () => {
    const api = await newApi('link-viem');
    const wallet = newWallet();
    expect(wallet.address).not.toBe(wallet.address.toLowerCase());
    const challenge = (await api.nonce()).body;
    const reply = await api.link({ address: wallet.address, signature: await sign(wallet, challenge) });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ walletAddress: wallet.address.toLowerCase(), walletLinked: true, status: 'ACTIVE' });
    const row = await accountRow(stack, reply.body.id);
    expect(row!.wallet_address).toBe(wallet.address.toLowerCase());
    expect(row!.wallet_linked_at).toBeInstanceOf(Date);
    expect(await challengeRow(stack, reply.body.id)).toBeUndefined();
    expect((await api.me()).body).toEqual(reply.body);
  });

  it('links a signature made by ethers Wallet.signMessage (what browser wallets do), mixed-case checksummed address', async () => {
    const api = await newApi('link-ethers');
    const wallet = Wallet.createRandom();
    expect(wallet.address).toMatch(/[A-F]/);
    const challenge = (await api.nonce()).body;
    const reply = await api.link({ address: wallet.address, signature: await wallet.signMessage(challenge.message) });
    expect(reply.status).toBe(200);
    expect(reply.body.walletAddress).toBe(wallet.address.toLowerCase());
  });

  it('accepts the address in lowercase too (compared case-insensitively)', async () => {
    const api = await newApi('link-lower');
    const wallet = newWallet();
    const challenge = (await api.nonce()).body;
    const reply = await api.link({ address: wallet.address.toLowerCase(), signature: await sign(wallet, challenge) });
    expect(reply.status).toBe(200);
    expect(reply.body.walletAddress).toBe(wallet.address.toLowerCase());
  });

  it('wallet linked → DELETE → unlinked (address and timestamp cleared); DELETE again changes nothing; wallet unlinked → POST wallet → linked', async () => {
    const api = await newApi('unlink');
    const first = newWallet();
    await api.link({ address: first.address, signature: await sign(first, (await api.nonce()).body) });
    const unlinked = await api.unlink();
    expect(unlinked.status).toBe(200);
    expect(unlinked.body).not.toHaveProperty('walletAddress');
    expect(unlinked.body.walletLinked).toBe(false);
    const row = await accountRow(stack, unlinked.body.id);
    expect(row).toMatchObject({ wallet_address: null, wallet_linked_at: null });

    const again = await api.unlink();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(unlinked.body);
    expect(await accountRow(stack, unlinked.body.id)).toEqual(row);

    const second = newWallet();
    const relinked = await api.link({ address: second.address, signature: await sign(second, (await api.nonce()).body) });
    expect(relinked.status).toBe(200);
    expect(relinked.body.walletAddress).toBe(second.address.toLowerCase());
  });

  it('wallet unlinked and never linked → DELETE → no change, no error', async () => {
    const api = await newApi('unlink-never');
    const before = await api.me();
    const row = await accountRow(stack, before.body.id);
    const reply = await api.unlink();
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(before.body);
    expect(await accountRow(stack, before.body.id)).toEqual(row);
  });

  it('wallet linked → POST nonce → 409, and no challenge is stored', async () => {
    const api = await newApi('nonce-linked');
    const wallet = newWallet();
    const linked = await api.link({ address: wallet.address, signature: await sign(wallet, (await api.nonce()).body) });
    const reply = await api.nonce();
    expect(reply.status).toBe(409);
    expect(reply.problem).toMatchObject({ status: 409, title: 'Conflict' });
    expect(await challengeRow(stack, linked.body.id)).toBeUndefined();
    expect((await api.me()).body).toEqual(linked.body);
  });
});

describe('POST /accounts/me/wallet errors, in processing order', () => {
  const goodAddress = '0x' + 'ab'.repeat(20);
  const goodSignature = '0x' + '1b'.repeat(65);

  it.each([
    ['address without 0x', { address: 'ab'.repeat(20), signature: goodSignature }, ['address']],
    ['address of 39 hex digits', { address: goodAddress.slice(0, -1), signature: goodSignature }, ['address']],
    ['address with a non-hex digit', { address: goodAddress.slice(0, -1) + 'g', signature: goodSignature }, ['address']],
    ['address missing', { signature: goodSignature }, ['address']],
    ['address not a string', { address: 42, signature: goodSignature }, ['address']],
    ['signature of 64 bytes', { address: goodAddress, signature: goodSignature.slice(0, -2) }, ['signature']],
    ['signature with a non-hex digit', { address: goodAddress, signature: goodSignature.slice(0, -1) + 'z' }, ['signature']],
    ['signature missing', { address: goodAddress }, ['signature']],
    ['both malformed', { address: 'nope', signature: 'nope' }, ['address', 'signature']],
  ])('422 naming the field: %s (before looking for a challenge)', async (_name, body, fields) => {
    const api = await newApi('malformed');
    const reply = await api.link(body);
    expect(reply.status).toBe(422);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(Object.keys(reply.problem.errors as object).sort()).toEqual(fields);
  });

  it.each([
    ['no body', undefined],
    ['a body that is not JSON', '{"address": '],
    ['a JSON array', '[]'],
  ])('422 for %s', async (_name, rawBody) => {
    const api = await newApi('bad-body');
    const reply = rawBody === undefined ? await api.link(undefined) : await api.linkRaw(rawBody);
    expect(reply.status).toBe(422);
    expect(reply.problem.errors).toHaveProperty('body');
  });

  it('a malformed value leaves the live challenge alone', async () => {
    const api = await newApi('malformed-keeps');
    const challenge = (await api.nonce()).body;
    expect((await api.link({ address: 'nope', signature: goodSignature })).status).toBe(422);
    const wallet = newWallet();
    expect((await api.link({ address: wallet.address, signature: await sign(wallet, challenge) })).status).toBe(200);
  });

  it('410 when there was never a challenge', async () => {
    const api = await newApi('no-challenge');
    const wallet = newWallet();
    const signature = await wallet.signMessage({ message: 'anything' });
    const reply = await api.link({ address: wallet.address, signature });
    expect(reply.status).toBe(410);
    expect((await api.me()).body.walletLinked).toBe(false);
  });

  it('422 when the recovered signer differs from address; the challenge survives for a correct retry', async () => {
    const api = await newApi('mismatch');
    const signer = newWallet();
    const claimed = newWallet();
    const challenge = (await api.nonce()).body;
    const signature = await sign(signer, challenge);
    const reply = await api.link({ address: claimed.address, signature });
    expect(reply.status).toBe(422);
    expect(reply.problem.errors).toHaveProperty('address');
    const id = (await api.me()).body.id;
    expect((await accountRow(stack, id))!.wallet_address).toBeNull();
    expect(await challengeRow(stack, id)).toMatchObject({ nonce: challenge.nonce });
    expect((await api.link({ address: signer.address, signature })).status).toBe(200);
  });

  it('422 for a signature over another message (another account’s challenge)', async () => {
    const mine = await newApi('other-message-a');
    const theirs = await newApi('other-message-b');
    const wallet = newWallet();
    await mine.nonce();
    const foreign = (await theirs.nonce()).body;
    const reply = await mine.link({ address: wallet.address, signature: await sign(wallet, foreign) });
    expect(reply.status).toBe(422);
  });

  it('422 naming signature when no signer can be recovered from it', async () => {
    const api = await newApi('unrecoverable');
    await api.nonce();
    const reply = await api.link({ address: goodAddress, signature: '0x' + '00'.repeat(64) + '1b' });
    expect(reply.status).toBe(422);
    expect(reply.problem.errors).toHaveProperty('signature');
  });

  it('409 when the address is linked to another account; nothing changes for the caller', async () => {
    const wallet = newWallet();
    const owner = await newApi('owner');
    expect((await owner.link({ address: wallet.address, signature: await sign(wallet, (await owner.nonce()).body) })).status).toBe(200);
    const other = await newApi('taker');
    const challenge = (await other.nonce()).body;
    const reply = await other.link({ address: wallet.address, signature: await sign(wallet, challenge) });
    expect(reply.status).toBe(409);
    expect(reply.problem.detail).toMatch(/another account/);
    const id = (await other.me()).body.id;
    expect((await accountRow(stack, id))!.wallet_address).toBeNull();
    expect(await challengeRow(stack, id)).toMatchObject({ nonce: challenge.nonce });
  });
});

describe('races and replays', () => {
  it('two accounts linking the same address at once: exactly one 200, the other 409', async () => {
    const wallet = newWallet();
    const apis = await Promise.all([newApi('race-a'), newApi('race-b')]);
    const signed = await Promise.all(apis.map(async (api) => ({ api, signature: await sign(wallet, (await api.nonce()).body) })));
    const replies = await Promise.all(signed.map(({ api, signature }) => api.link({ address: wallet.address, signature })));
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
    const holders = await stack.sql('SELECT id FROM hatchery.accounts WHERE wallet_address = $1', [wallet.address.toLowerCase()]);
    expect(holders).toEqual([{ id: replies.find((reply) => reply.status === 200)!.body.id }]);
  });

  it('the same signature posted twice: 200, then 410', async () => {
    const api = await newApi('replay');
    const wallet = newWallet();
    const body = { address: wallet.address, signature: await sign(wallet, (await api.nonce()).body) };
    expect((await api.link(body)).status).toBe(200);
    expect((await api.link(body)).status).toBe(410);
  });

  it('the same signature posted twice at once: one 200, one 410', async () => {
    const api = await newApi('replay-parallel');
    const wallet = newWallet();
    const body = { address: wallet.address, signature: await sign(wallet, (await api.nonce()).body) };
    const replies = await Promise.all([api.link(body), api.link(body)]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 410]);
  });

  it('a signature cannot link again after an unlink', async () => {
    const api = await newApi('replay-after-unlink');
    const wallet = newWallet();
    const body = { address: wallet.address, signature: await sign(wallet, (await api.nonce()).body) };
    expect((await api.link(body)).status).toBe(200);
    expect((await api.unlink()).status).toBe(200);
    expect((await api.link(body)).status).toBe(410);
  });

  it('parallel nonce requests of one account agree on one challenge', async () => {
    const api = await newApi('nonce-race');
    const replies = await Promise.all(Array.from({ length: 5 }, () => api.nonce()));
    expect(replies.map((reply) => reply.status)).toEqual(Array(5).fill(200));
    expect(new Set(replies.map((reply) => reply.body.nonce)).size).toBe(1);
  });
});
