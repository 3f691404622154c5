import { addressString, bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/*
 * A sale as the sale list answers it, for the OpenAPI document and the
 * client's types. Apart from sales.ts, as freshness-schema.ts is from
 * freshness.ts: each paged read imports that module's query source, and
 * constructing this schema cost its cold start, though only the document and
 * the types need it.
 */

export const saleSchema = z.object({
  tokenId: bigIntString,
  seller: addressString,
  buyer: addressString,
  price: bigIntString.check(z.describe('Wei.')),
  platformFee: bigIntString.check(z.describe('Wei.')),
  royalty: bigIntString.check(z.describe('Wei.')),
  blockNumber: bigIntString,
});
