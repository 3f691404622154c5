import { getSummary } from '@hatchery/core/indexer/summary';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.getSummary, () => getSummary());
