import { getReferralInfo } from '@hatchery/core/indexer/referral-read';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.getAccountReferral, ({ params }) => getReferralInfo(params.address));
