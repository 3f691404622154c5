import { addressString, bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/*
 * A listing as the listing list answers it, for the OpenAPI document and the
 * client's types. Apart from listings.ts, as freshness-schema.ts is from
 * freshness.ts: each paged read imports that module's query source, and
 * constructing this schema cost its cold start, though only the document and
 * the types need it.
 */

export const listingSchema = z.object({
  tokenId: bigIntString,
  seller: addressString,
  price: bigIntString.check(z.describe('Wei.')),
  status: z.string(),
  editionId: bigIntString.check(z.describe('"0" when the listed NFT is not indexed.')),
  editionName: z.string(),
  artUri: z.string(),
  rarity: z.int(),
  gender: z.int(),
  nftName: z.string(),
  attributes: z.object({ health: z.int(), skill: z.int(), morale: z.int() }),
});
