import { listAccountStaking } from '@hatchery/core/indexer/staking-read';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountStaking, ({ params, query }) => listAccountStaking(params.address, query));
