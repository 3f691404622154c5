import * as z from '../schema';
import { settingsReader } from './environment';
import { nonEmpty, wholeNumber } from './fields';

/** The wallet challenge and its rate limit. */
export const accountsSchema = z.object({
  SERVICE_NAME: nonEmpty('Hatchery'),
  WALLET_POSTS_PER_MINUTE: wholeNumber(5, 1),
});

export const accountsSettings = settingsReader(accountsSchema);
