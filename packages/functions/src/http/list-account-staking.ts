import { stakedBy, stakingSource } from '@hatchery/core/indexer/staking';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listAccountStaking, ({ params, query }) => readPage(stakingSource, query, stakedBy(params.address)));
