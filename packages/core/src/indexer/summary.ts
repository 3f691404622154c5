import * as z from '@hatchery/platform/schema';
import { bigIntString } from './wire';

export const summarySchema = z.object({
  salesCount: z.int(),
  totalVolume: bigIntString.check(z.describe('Wei: the sum of all sale prices.')),
  nftCount: z.int().check(z.describe('NFTs not burned.')),
  editionCount: z.int(),
  totalTokenTransferred: bigIntString.check(z.describe('The sum of all transfers of the service token.')),
});

export type SummaryDto = z.infer<typeof summarySchema>;
