import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/** A forge request as the account's forge request list answers it, for the OpenAPI document and the client's types: apart from forge-requests.ts, which the handlers import (see responses.ts). */
export const forgeRequestSchema = z.object({
  requestId: bigIntString,
  tier: z.int(),
  status: z.string(),
  tokenId: z.optional(bigIntString).check(z.describe('Absent until the request is fulfilled.')),
  editionId: z.optional(bigIntString).check(z.describe('Absent until the request is fulfilled.')),
  blockNumber: bigIntString,
});
