import { listAccountNfts } from '@hatchery/core/indexer/nfts-read';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountNfts, ({ params, query }) => listAccountNfts(params.address, query));
