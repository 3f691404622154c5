import * as z from '@hatchery/platform/schema';

/** On-chain big integers travel as decimal strings of up to 78 digits (docs/http-api.md). */
export const bigIntString = z.string().check(z.regex(/^-?[0-9]{1,78}$/));

export const addressString = z.string().check(z.regex(/^0x[0-9a-f]{40}$/));
