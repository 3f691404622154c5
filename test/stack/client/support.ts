import { responseOf } from '@hatchery/functions/responses';
import { createClient, type Client, type RouteName } from '../../../packages/client/src/index';
import type { TestStack } from '../../support/stack';

let counter = 0;

/** A client of the stack for a new user, with a real token from the stack's identity provider, validating every body with the server's own schemas. */
export async function userClient(stack: TestStack, prefix: string): Promise<Client & { uid: string }> {
  const uid = `${prefix}-${process.pid}-${++counter}`;
  const token = await stack.idp.signToken({ uid, email: `${uid}@example.com`, name: `User ${counter}` });
  return { ...publicClient(stack, () => token), uid };
}

export function publicClient(stack: TestStack, getToken?: () => string): Client {
  return createClient({
    baseUrl: stack.url,
    getToken,
    validate: (route: RouteName, body: unknown) => {
      const schema = responseOf(route);
      if (!schema) throw new Error(`${route} has no response schema`);
      return schema.parse(body);
    },
  });
}

/** Moves the account's challenge back in time as if `ms` had passed (the state table's expiry). */
export const ageChallenge = (stack: TestStack, accountId: string, ms: number) =>
  stack.sql(
    `UPDATE hatchery.wallet_challenges SET created_at = created_at - make_interval(secs => $2), expires_at = expires_at - make_interval(secs => $2) WHERE account_id = $1`,
    [accountId, ms / 1000],
  );
