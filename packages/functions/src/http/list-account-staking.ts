import { stakedBy, stakingSource } from '@hatchery/core/indexer/staking';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountStaking, ({ params, query }) => readPage(stakingSource, query, stakedBy(params.address)));
