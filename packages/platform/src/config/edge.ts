import * as z from '../schema';
import { wholeNumber } from './fields';

/** What is enforced before any function runs: by the router's WAF in AWS (infra/router.ts), by the local gateway locally. */
export const edgeSchema = z.object({
  IP_RATE_LIMIT_PER_SECOND: wholeNumber(200),
});
