import { forgeRequestsSource, requestedBy } from '@hatchery/core/indexer/forge-requests';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listAccountForgeRequests, ({ params, query }) =>
  readPage(forgeRequestsSource, query, requestedBy(params.address)),
);
