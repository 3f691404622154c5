import { listAccountForgeRequests } from '@hatchery/core/indexer/forge-requests-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listAccountForgeRequests, ({ params, query }) => listAccountForgeRequests(params.address, query));
