import { nftsSource, ownedNfts } from '@hatchery/core/indexer/nfts';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountNfts, ({ params, query }) => readPage(nftsSource, query, ownedNfts(params.address)));
