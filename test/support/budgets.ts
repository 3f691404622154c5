import type { HttpRouteName } from '@hatchery/functions/routes';
import budgets from '../budgets.json' with { type: 'json' };

/**
 * The goals of lean functions and of the client, held as data in test/budgets.json:
 * test/deploy/bundles.test.ts asserts the bundles' size budgets, test/unit/client/package.test.ts the client's, and
 * the bench's cold-start and warm sections print every goal beside their figures.
 *
 * A bundle budget is its group's largest library floor (test/deploy/library-floor.ts, which the cold-start section prints) with
 * a quarter more for Hatchery's own code: Powertools Logger and Metrics, Middy, zod, sst's Resource and pg for a
 * read; the AWS SDK's DynamoDB document client, aws-jwt-verify and viem besides for an account function; the SDK's
 * DynamoDB and management clients for the hub and the fan-out. The HTTP budget holds the paged reads where they
 * are, above that quarter: the query grammar and compiler, the cursor, the page statements and the read-model
 * derivation are about 30 KB of them. A budget rises only with its floor, or on purpose.
 */

/** What a deployed function does, which sets its budget. */
export type FunctionRole = 'http' | 'hub' | 'fanOut' | 'migrator' | 'other';

export interface SizeBudget {
  /** The group of functions the budget holds, as the bench prints it. */
  goal: string;
  bytes: number;
}

const goals = budgets satisfies {
  bundles: Record<'http' | 'account' | 'hub', SizeBudget>;
  client: { goal: string; gzipBytes: number };
  coldStart: { importOverLibraryFloor: number };
  warm: { overheadMs: number; overPg: number };
};

export const sizeBudgets = goals.bundles;

/** @hatchery/client, minified and gzipped, without its peer @microsoft/signalr. */
export const clientBudget = goals.client;

/** The account routes: /accounts/me and what is under it (verify a token, provision, link a wallet), not /accounts/{address}. */
const isAccountRoute = (key: string) => /^[A-Z]+ \/accounts\/me(\/|$)/.test(key);

/**
 * The budget of one deployed function, by what serves it (`key` is its route
 * key where a route serves it). The migrator is exempt: it carries
 * node-pg-migrate and runs once per deploy, never in a user's request. A
 * function of another kind has no budget, which test/deploy/bundles.test.ts reports, so a
 * new kind of function is given one on purpose.
 */
export function sizeBudget(fn: { role: FunctionRole; key: string }): SizeBudget | 'exempt' | undefined {
  switch (fn.role) {
    case 'http':
      return isAccountRoute(fn.key) ? sizeBudgets.account : sizeBudgets.http;
    case 'hub':
    case 'fanOut':
      return sizeBudgets.hub;
    case 'migrator':
      return 'exempt';
    case 'other':
      return undefined;
  }
}

/** The read handlers, which the warm section measures. */
export const readRouteNames = [
  'listEditions',
  'listListings',
  'listSales',
  'listAccountNfts',
  'listAccountStaking',
  'listAccountForgeRequests',
  'getAccountReferral',
  'getSummary',
  'health',
] as const satisfies readonly HttpRouteName[];

/*
 * The goal is against the function's own libraries, not the pg-only bundle: a
 * read's libraries alone (Powertools, Middy, zod, pg) import slower than that
 * bundle, so only what Hatchery's code adds can be held to a ratio. The bench
 * prints each function's import against the pg-only bundle too, as the cost
 * of everything over pg.
 */

/** Every function's import (Lambda's init phase) at most this many times its library floor's (test/deploy/library-floor.ts), measured in the same run. */
export const floorRatioGoal = goals.coldStart.importOverLibraryFloor;

/** A read handler's warm invocation beside the same SQL through pg in the same process, as deployed (info logs, metrics, tracing). */
export const warmGoals = goals.warm;

/** "met" or "NOT met", for the goal lines the bench prints. */
export const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
