import { listAccountForgeRequests } from '@hatchery/core/indexer/forge-requests';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.listAccountForgeRequests, ({ params, query }) => listAccountForgeRequests(params.address, query));
