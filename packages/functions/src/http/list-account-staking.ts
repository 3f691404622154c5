import { listAccountStaking } from '@hatchery/core/indexer/staking-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listAccountStaking, ({ params, query }) => listAccountStaking(params.address, query));
