import { listAccountNfts } from '@hatchery/core/indexer/nfts';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listAccountNfts, ({ params, query }) => listAccountNfts(params.address, query));
