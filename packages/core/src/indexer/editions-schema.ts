import { bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/*
 * An edition as the edition list answers it, for the OpenAPI document and the
 * client's types. Apart from editions.ts, as freshness-schema.ts is from
 * freshness.ts: each paged read imports that module's query source, and
 * constructing this schema cost its cold start, though only the document and
 * the types need it.
 */

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
