/**
 * What the listener's own options (packages/listener/src/options.ts) read of the webhooks in the environment it is
 * run with: `tsx test/deploy/sst/listener-webhooks.ts`, given only a container's environment, prints them as JSON. In
 * a process of its own because `sst`'s `Resource` reads SST_RESOURCE_<Name> once per process.
 */
import { listenerOptions } from '@hatchery/listener/options';

const { webhooks } = listenerOptions({});
process.stdout.write(JSON.stringify(webhooks));
