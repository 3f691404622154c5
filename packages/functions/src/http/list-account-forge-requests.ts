import { listAccountForgeRequests } from '@hatchery/core/indexer/forge-requests';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listAccountForgeRequests, ({ params, query }) => listAccountForgeRequests(params.address, query));
