import { listAccountNfts } from '@hatchery/core/indexer/nfts';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountNfts, ({ params, query }) => listAccountNfts(params.address, query));
