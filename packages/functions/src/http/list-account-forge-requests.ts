import { listAccountForgeRequests } from '@hatchery/core/indexer/forge-requests-read';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountForgeRequests, ({ params, query }) => listAccountForgeRequests(params.address, query));
