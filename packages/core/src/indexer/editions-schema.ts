import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/** An edition as the edition list answers it, for the OpenAPI document and the client's types: apart from editions.ts, which the handlers import (see responses.ts). */
export const editionSchema = z.object({
  id: bigIntString,
  name: z.string(),
  artUri: z.string(),
  health: z.int(),
  skill: z.int(),
  morale: z.int(),
  rarity: z.int(),
  maxSupply: bigIntString,
  minted: bigIntString,
  mintStart: bigIntString,
  mintEnd: bigIntString,
  price: bigIntString.check(z.describe('Wei.')),
  distribution: z.int(),
  active: z.boolean(),
});
