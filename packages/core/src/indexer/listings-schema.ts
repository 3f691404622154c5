import { addressString, bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/** A listing as the listing list answers it, for the OpenAPI document and the client's types: apart from listings.ts, which the handlers import (see responses.ts). */
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
