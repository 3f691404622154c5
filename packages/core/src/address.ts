/** An EVM address as a caller may write it: 0x and 40 hex digits, in either case (a checksummed address is mixed). */
export const addressPattern = /^0x[0-9a-fA-F]{40}$/;
