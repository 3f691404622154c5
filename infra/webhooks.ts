import { webhookSecretNames } from '@hatchery/platform/config/events';
import type { DeploySettings } from './settings';

/** What the listener is given for the stage's webhooks: the secrets it links, and its variables. */
export interface ListenerWebhooks {
  link: sst.Secret[];
  environment: Record<string, string>;
}

/**
 * The stage's webhook endpoints (HATCHERY_WEBHOOKS, checked by deploySettings) for the listener, which delivers
 * them (docs/webhooks.md). Each endpoint signs with two SST secrets named by webhookSecretNames: the current one has
 * no default, so a deploy without it stops and names it; the next one is empty but during a rotation. Linked, they
 * reach the container as SST_RESOURCE_<Name>, where the listener's sstLinks() reads them; the declaration goes
 * without them as WEBHOOK_ENDPOINTS. A stage that declares no endpoint gets none of it.
 */
export function createWebhooks(settings: DeploySettings): ListenerWebhooks {
  const { endpoints, retryHours } = settings.webhooks;
  if (endpoints.length === 0) return { link: [], environment: {} };
  return {
    link: endpoints.flatMap(({ name }) => {
      const { current, next } = webhookSecretNames(name);
      return [new sst.Secret(current), new sst.Secret(next, '')];
    }),
    environment: { WEBHOOK_ENDPOINTS: JSON.stringify(endpoints), WEBHOOK_RETRY_HOURS: String(retryHours) },
  };
}
