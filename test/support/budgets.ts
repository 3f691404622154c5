import type { HttpRouteName } from '@hatchery/functions/routes';

/**
 * The goals of lean functions, in one place: test/infra/bundles.test.ts
 * asserts the size budgets; the bench's cold-start and warm sections print every
 * goal beside their figures.
 */

/** What a deployed function does, which sets its budget. */
export type FunctionRole = 'http' | 'hub' | 'fanOut' | 'migrator' | 'other';

export interface SizeBudget {
  /** The group of functions the budget holds, as the bench prints it. */
  goal: string;
  bytes: number;
}

const kib = 1024;

/**
 * Each group's largest library floor (library-floor.ts: only the functions' own third-party libraries,
 * constructed as they construct them), as `BENCH_SECTIONS=cold-start npm run bench` printed it on
 * 2026-11-26: Powertools Logger and Metrics, Middy, zod, sst's Resource and pg for a read; the AWS SDK's
 * DynamoDB document client, aws-jwt-verify and viem besides for an account function; the SDK's DynamoDB and
 * management clients for the hub and the fan-out.
 */
export const floorBytes = { http: 152 * kib, account: 523 * kib, hub: 427 * kib } as const;

/** The margin the floor goal allows Hatchery's own code: 1.25× the floor. */
const withMargin = (floor: number) => Math.ceil(floor * 1.25);

export const sizeBudgets = {
  // The floor's 1.25× would be 190 KB; the paged reads are 205–206 KB (the query grammar and compiler, the cursor, the
  // page statements and the read-model derivation are about 30 KB of it, the logger's guard that keeps a log call from
  // ever throwing 3 KB), so this budget holds them where they are rather than at the goal.
  http: { goal: 'HTTP read, health, docs, negotiate bundles', bytes: 210 * kib },
  account: { goal: 'account bundles (/accounts/me…)', bytes: withMargin(floorBytes.account) },
  hub: { goal: 'hub and fan-out bundles', bytes: withMargin(floorBytes.hub) },
} as const satisfies Record<string, SizeBudget>;

/** The account routes: /accounts/me and what is under it (verify a token, provision, link a wallet), not /accounts/{address}. */
const isAccountRoute = (key: string) => /^[A-Z]+ \/accounts\/me(\/|$)/.test(key);

/**
 * The budget of one deployed function, by what serves it (`key` is its route
 * key where a route serves it). The migrator is exempt: it carries
 * node-pg-migrate and runs once per deploy, never in a user's request. A
 * function of another kind has no budget, which bundles.test.ts reports, so a
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
 * still prints each function's import against the pg-only bundle, as the cost
 * of everything over pg.
 */

/** Every function's import (Lambda's init phase) at most this many times its library floor's (library-floor.ts), measured in the same run. */
export const floorRatioGoal = 1.25;

/** A read handler's warm invocation beside the same SQL through pg in the same process, as deployed (info logs, metrics, tracing). */
export const warmGoals = { overheadMs: 0.1, ratio: 1.3 } as const;

/** "met" or "NOT met", for the goal lines the bench prints. */
export const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
