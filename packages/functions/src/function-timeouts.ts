/**
 * Lambda's timeout of the functions behind each kind of route, in seconds. infra/functions.ts gives the functions
 * these, and the local gateway gives each invocation the same deadline, so that Middy's early 503 comes locally
 * when it would in AWS. HTTP: above a request's 5 s bound on the database (core's databaseLimits), below API
 * Gateway's 30 s for an integration.
 */
export const functionTimeoutSeconds = { http: 15, hub: 10 } as const;
