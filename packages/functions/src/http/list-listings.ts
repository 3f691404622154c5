import { listListings } from '@hatchery/core/indexer/listings';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.listListings, ({ query }) => listListings(query));
