import { listAccountNfts } from '@hatchery/core/indexer/nfts';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.listAccountNfts, ({ params, query }) => listAccountNfts(params.address, query));
