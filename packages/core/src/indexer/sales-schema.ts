import { addressString, bigIntString } from './wire';
import * as z from '@hatchery/platform/schema';

/** A sale as the sale list answers it, for the OpenAPI document and the client's types: apart from sales.ts, which the handlers import (see responses.ts). */
export const saleSchema = z.object({
  tokenId: bigIntString,
  seller: addressString,
  buyer: addressString,
  price: bigIntString.check(z.describe('Wei.')),
  platformFee: bigIntString.check(z.describe('Wei.')),
  royalty: bigIntString.check(z.describe('Wei.')),
  blockNumber: bigIntString,
});
