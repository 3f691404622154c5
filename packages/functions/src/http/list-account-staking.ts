import { listAccountStaking } from '@hatchery/core/indexer/staking';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.listAccountStaking, ({ params, query }) => listAccountStaking(params.address, query));
