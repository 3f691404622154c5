import { checkHealth } from '@hatchery/core/health-check';
import * as routes from '../routes/operations';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.health, () => checkHealth());
