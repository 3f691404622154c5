import { toProblem } from '@hatchery/core/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack';
import { accountRow, call, client, freshCaller } from './support';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const accountCount = async (id: string) => Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM hatchery.accounts WHERE id = $1', [id]))[0]!.n);

describe('the first authenticated request creates the account', () => {
  it('GET /accounts/me answers the new ACTIVE account, email lowercased, nickname from name, with audit timestamps', async () => {
    const caller = freshCaller('first', { email: 'Mixed.Case@Example.COM', name: 'Alice Smith' });
    const reply = await (await client(stack, caller)).me();
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.body).toEqual({ id: caller.uid, email: 'mixed.case@example.com', nickname: 'Alice Smith', status: 'ACTIVE', walletLinked: false });
    const row = await accountRow(stack, caller.uid);
    expect(row).toMatchObject({ email: 'mixed.case@example.com', wallet_address: null, wallet_linked_at: null });
    expect(row!.created_at).toBeInstanceOf(Date);
    expect(row!.updated_at).toBeInstanceOf(Date);
  });

  it.each([
    ['POST /accounts/me/wallet/nonce', 'POST', '/accounts/me/wallet/nonce', undefined, 200],
    ['DELETE /accounts/me/wallet', 'DELETE', '/accounts/me/wallet', undefined, 200],
    ['POST /accounts/me/wallet, even with a bad body', 'POST', '/accounts/me/wallet', {}, 422],
  ])('also on %s', async (_name, method, path, body, status) => {
    const caller = freshCaller('via-endpoint');
    const token = await stack.idp.signToken(caller);
    const reply = await call(stack, method, path, { token, body });
    expect(reply.status).toBe(status);
    expect(await accountCount(caller.uid)).toBe(1);
  });

  it('leaves an existing account as it is when later tokens carry another name or email', async () => {
    const caller = freshCaller('existing', { name: 'First Name' });
    const first = await (await client(stack, caller)).me();
    const before = await accountRow(stack, caller.uid);
    const later = await (await client(stack, { uid: caller.uid, email: 'changed@example.com', name: 'Second Name' })).me();
    expect(later.status).toBe(200);
    expect(later.body).toEqual(first.body);
    expect(await accountRow(stack, caller.uid)).toEqual(before);
  });

  it('20 parallel first requests of one new user: 20 successes, one account', async () => {
    const api = await client(stack, freshCaller('parallel'));
    const replies = await Promise.all(Array.from({ length: 20 }, () => api.me()));
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    expect(new Set(replies.map((reply) => JSON.stringify(reply.body))).size).toBe(1);
    expect(await accountCount(replies[0]!.body.id)).toBe(1);
  });
});

describe('nickname', () => {
  it.each([
    ['a valid name as it is', 'Bob_the 2nd', 'whoever@example.com', 'Bob_the 2nd'],
    ['the name without surrounding whitespace', ' \t Alice Smith \n ', 'trimmed@example.com', 'Alice Smith'],
    ['the name trimmed before the length rule: 20 characters inside spaces', `  ${'B'.repeat(20)}  `, 'trimmed-long@example.com', 'B'.repeat(20)],
    ['the email local part when the name is only whitespace', '     ', 'dora@example.com', 'dora'],
    ['the email local part when the name is too short', 'Al', 'alice@example.com', 'alice'],
    ['the email local part when the name is too long', 'A'.repeat(21), 'alicia@example.com', 'alicia'],
    ['the email local part, invalid characters replaced by _, when the name has invalid characters', 'Zoë!', 'zoe.o-brien+x@example.com', 'zoe_o_brien_x'],
    ['the email local part when there is no name', undefined, 'Carol.King@example.com', 'Carol_King'],
  ])('%s', async (_name, name, email, nickname) => {
    const caller = freshCaller('nick', { email, name });
    const reply = await (await client(stack, caller)).me();
    expect(reply.status).toBe(200);
    expect(reply.body.nickname).toBe(nickname);
  });

  it.each([
    ['a local part shorter than 3 characters', 'ab@example.com'],
    ['a local part longer than 20 characters', `${'x'.repeat(21)}@example.com`],
  ])('422 naming nickname when still invalid: %s; no account', async (_name, email) => {
    const caller = freshCaller('bad-nick', { email, name: undefined });
    const reply = await (await client(stack, caller)).me();
    expect(reply.status).toBe(422);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(reply.problem.errors).toHaveProperty('nickname');
    expect(await accountCount(caller.uid)).toBe(0);
  });
});

describe('email', () => {
  it.each([
    ['no @', 'not-an-email'],
    ['no domain dot', 'someone@localhost'],
    ['whitespace', 'some one@example.com'],
    ['no email claim at all', undefined],
  ])('422 naming email: %s; no account', async (_name, email) => {
    const caller = freshCaller('bad-email', { email, name: 'Valid Name' });
    const reply = await (await client(stack, caller)).me();
    expect(reply.status).toBe(422);
    expect(reply.problem.errors).toHaveProperty('email');
    expect(await accountCount(caller.uid)).toBe(0);
  });

  it('409 when the email belongs to another id, every time, until that record is gone', async () => {
    const owner = freshCaller('owner', { email: 'shared@example.com' });
    expect((await (await client(stack, owner)).me()).status).toBe(200);
    const intruder = await client(stack, freshCaller('intruder', { email: 'SHARED@example.com' }));
    for (let i = 0; i < 3; i++) {
      const reply = await intruder.me();
      expect(reply.status).toBe(409);
      expect(reply.problem).toMatchObject({ status: 409, title: 'Conflict' });
      expect(reply.problem.detail).toMatch(/email/);
    }
    // The conflict is not absorbed like a duplicate first request would be: on every protected endpoint.
    expect((await intruder.nonce()).status).toBe(409);
    expect((await intruder.unlink()).status).toBe(409);
    await stack.sql('DELETE FROM hatchery.accounts WHERE id = $1', [owner.uid]);
    const after = await intruder.me();
    expect(after.status).toBe(200);
    expect(after.body.email).toBe('shared@example.com');
  });
});

describe('errors', () => {
  it('GET /accounts/me answers 404 for an account that does not exist when the handler reads it', async () => {
    // The only way to reach this with provisioning in place: the row vanishes between provisioning and the handler.
    await stack.sql(`CREATE FUNCTION public.vanish() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN DELETE FROM hatchery.accounts WHERE id = NEW.id; RETURN NULL; END $$`);
    await stack.sql(`CREATE TRIGGER vanish AFTER INSERT ON hatchery.accounts FOR EACH ROW WHEN (NEW.id LIKE 'vanishing-%') EXECUTE FUNCTION public.vanish()`);
    try {
      const reply = await (await client(stack, freshCaller('vanishing'))).me();
      expect(reply.status).toBe(404);
      expect(reply.problem).toMatchObject({ status: 404, title: 'Not found', instance: '/accounts/me' });
    } finally {
      await stack.sql('DROP TRIGGER vanish ON hatchery.accounts');
      await stack.sql('DROP FUNCTION public.vanish()');
    }
  });

  it('maps any PostgreSQL unique violation (23505) to a 409 that carries no SQL', async () => {
    const caller = freshCaller('unique');
    await (await client(stack, caller)).me();
    const error = await stack
      .sql(`INSERT INTO hatchery.accounts (id, email, nickname) VALUES ('other-unique', $1, 'abc')`, [`${caller.uid}@example.com`])
      .catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe('23505');
    const problem = toProblem(error, '/x');
    expect(problem.status).toBe(409);
    expect(JSON.stringify(problem.body)).not.toMatch(/accounts_email_key|INSERT|duplicate key/);
  });
});
