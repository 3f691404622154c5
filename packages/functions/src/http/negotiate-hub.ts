import { negotiate } from '@hatchery/platform/signalr/protocol';
import * as routes from '../routes/realtime';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.negotiateHub, async ({ query }) => negotiate(query.negotiateVersion));
