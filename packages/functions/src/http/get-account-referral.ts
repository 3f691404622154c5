import { getReferralInfo } from '@hatchery/core/indexer/referral-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.getAccountReferral, ({ params }) => getReferralInfo(params.address));
