import { listAccountStaking } from '@hatchery/core/indexer/staking';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountStaking, ({ params, query }) => listAccountStaking(params.address, query));
