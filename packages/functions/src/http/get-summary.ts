import { getSummary } from '@hatchery/core/indexer/summary-read';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.getSummary, () => getSummary());
