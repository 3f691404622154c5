import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';

/**
 * Lambda's timeout of each kind of function, in seconds. infra/functions.ts gives the functions these, and the local
 * gateway and Lambda service give each invocation the same deadline, so that Middy's early 503 and a shard's stop
 * come locally when they would in AWS. HTTP: above a request's 5 s bound on the database (core's databaseLimits),
 * below API Gateway's 30 s for an integration. The fan-out's is the shard's, from the hub's delivery deadlines.
 */
export const functionTimeoutSeconds = { http: 15, hub: 10, fanOut: deliveryDeadlines.shardTimeoutMs / 1000 } as const;
