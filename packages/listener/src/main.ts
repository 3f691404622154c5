import { logger } from '@hatchery/platform/telemetry/logger';
import { checkEndpointAddresses } from '@hatchery/core/webhooks/endpoints';
import { Listener } from './listener';

/**
 * The Fargate task's entry point (see ../Dockerfile). Configuration comes
 * from the environment (DATABASE_URL, WEBSOCKET_MANAGEMENT_ENDPOINT,
 * DYNAMODB_TABLE, AWS_REGION, FANOUT_FUNCTION_NAME); ECS stops a task with SIGTERM, then SIGKILL
 * after its stop timeout, so the listener finishes its fan-out and exits.
 */
// Every AWS client here is the SDK's, with its default credential chain: the task role's credentials come from the
// container endpoint and are renewed before they expire (static ones in the environment, the local stack's, come first).
const log = logger().child({ component: 'listener' });
const listener = new Listener({ log });
// A webhook whose host name resolves to a private address is refused here, at start, not at its first delivery.
await checkEndpointAddresses(listener.options.webhooks.endpoints, { deployed: listener.options.webhooks.deployed }).catch((error: unknown) => {
  log.error({ err: error }, 'the webhook endpoints break the rules for a deployed stage');
  process.exit(1);
});
listener.start();
log.info({ managementEndpoint: listener.options.managementEndpoint }, 'listener started');

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'listener stopping');
    listener.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'listener did not stop cleanly');
        process.exit(1);
      },
    );
  });
}
