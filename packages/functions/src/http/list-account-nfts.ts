import { listAccountNfts } from '@hatchery/core/indexer/nfts-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listAccountNfts, ({ params, query }) => listAccountNfts(params.address, query));
