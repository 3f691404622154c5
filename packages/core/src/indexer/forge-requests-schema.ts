import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/*
 * A forge request as the account's forge request list answers it, for the
 * OpenAPI document and the client's types. Apart from forge-requests.ts, as
 * freshness-schema.ts is from freshness.ts: each paged read imports that
 * module's query source, and constructing this schema cost its cold start,
 * though only the document and the types need it.
 */

export const forgeRequestSchema = z.object({
  requestId: bigIntString,
  tier: z.int(),
  status: z.string(),
  tokenId: z.optional(bigIntString).check(z.describe('Absent until the request is fulfilled.')),
  editionId: z.optional(bigIntString).check(z.describe('Absent until the request is fulfilled.')),
  blockNumber: bigIntString,
});
