import type { HttpRoute } from '../routes';

/** The four protected /accounts/me routes (issue: accounts). */
export const accountRoutes = {} as const satisfies Record<string, HttpRoute>;
