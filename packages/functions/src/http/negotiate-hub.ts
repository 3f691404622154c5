import { negotiate } from '@hatchery/core/realtime/protocol';
import * as routes from '../routes/realtime';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.negotiateHub, async ({ query }) => negotiate(query.negotiateVersion));
