import { activeListings, listingsSource } from '@hatchery/core/indexer/listings';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listListings, ({ query }) => readPage(listingsSource, query, activeListings));
