import { activeListings, listingsSource } from '@hatchery/core/indexer/listings';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listListings, ({ query }) => readPage(listingsSource, query, activeListings));
