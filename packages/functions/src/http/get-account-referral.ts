import { getReferralInfo } from '@hatchery/core/indexer/referral';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.getAccountReferral, ({ params }) => getReferralInfo(params.address));
