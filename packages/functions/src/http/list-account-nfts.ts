import { nftsSource, ownedNfts } from '@hatchery/core/indexer/nfts';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listAccountNfts, ({ params, query }) => readPage(nftsSource, query, ownedNfts(params.address)));
