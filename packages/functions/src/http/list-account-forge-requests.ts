import { forgeRequestsSource, requestedBy } from '@hatchery/core/indexer/forge-requests';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listAccountForgeRequests, ({ params, query }) => readPage(forgeRequestsSource, query, requestedBy(params.address)));
