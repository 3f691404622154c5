import { listAccountStaking } from '@hatchery/core/indexer/staking';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listAccountStaking, ({ params, query }) => listAccountStaking(params.address, query));
