import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/** An NFT as the account's NFT list answers it, for the OpenAPI document and the client's types: apart from nfts.ts, which the handlers import (see responses.ts). */
export const nftItemSchema = z.object({
  tokenId: bigIntString,
  attributes: z.object({
    health: z.int(),
    skill: z.int(),
    morale: z.int(),
    gender: z.int(),
  }),
  editionId: bigIntString,
  editionName: z.string(),
  artUri: z.string(),
  rarity: z.int(),
  nftName: z.string(),
  staked: z.boolean(),
});
