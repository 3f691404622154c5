import type { Identity } from '@hatchery/core/accounts/identity';
import type { HttpContext } from './types';

/** The authenticated caller; reaching here without one means the chain is misassembled, which is a bug, not a 401. */
export function callerOf(context: HttpContext): Identity {
  if (!context.caller) throw new Error('no authenticated caller: authenticate() must run first');
  return context.caller;
}
