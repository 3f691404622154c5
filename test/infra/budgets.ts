import { httpRoutes, type HttpRouteName } from '@hatchery/functions/routes';

/**
 * The goals of lean functions, in one place: test/infra/bundles.test.ts
 * asserts the size budgets; the bench's cold-start and warm sections print every
 * goal beside their figures.
 */

/** What a deployed function does, which sets its budget. */
export type FunctionRole = 'http' | 'hub' | 'fanOut' | 'migrator' | 'other';

export interface SizeBudget {
  /** The group of functions the issue sets the goal for. */
  goal: string;
  bytes: number;
}

const kib = 1024;

export const sizeBudgets = {
  // 200 KB until Powertools Logger and Metrics (with their commons) came back into every function: about 32 KB of a read bundle.
  http: { goal: 'HTTP read, health, docs, negotiate bundles', bytes: 220 * kib },
  // 300 KB and 250 KB until DynamoDB and the management API went through the AWS SDK's clients (their credential
  // chain and @smithy/core included) instead of a hand-written signed client: 49 KB became 427 KB minified.
  account: { goal: 'account bundles (/accounts/me…)', bytes: 640 * kib },
  hub: { goal: 'hub and fan-out bundles', bytes: 480 * kib },
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

/** The read handlers: the cold start's import goal and the warm section are about these. */
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

export const readRouteKeys: ReadonlySet<string> = new Set(readRouteNames.map((name) => `${httpRoutes[name].method} ${httpRoutes[name].path}`));

/** A read bundle's import (Lambda's init phase) at most this many times the pg-only bundle's, measured in the same run. */
export const importRatioGoal = 1.5;

/** Every function's import (Lambda's init phase) at most this many times its library floor's (library-floor.ts), measured in the same run. */
export const floorRatioGoal = 1.25;

/** A read handler's warm invocation beside the same SQL through pg in the same process, as deployed (info logs, metrics, tracing). */
export const warmGoals = { overheadMs: 0.1, ratio: 1.3 } as const;

/** "met" or "NOT met", for the goal lines the bench prints. */
export const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
