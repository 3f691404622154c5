import * as z from '../schema';
import { wholeNumber } from './fields';

/** The event log and its webhooks (docs/webhooks.md); the listener reads them, through the whole configuration. */
export const eventsSchema = z.object({
  /** How long the event log keeps an event: GET /events answers 410 for a cursor older than this. */
  EVENT_RETENTION_DAYS: wholeNumber(30, 1),
  /**
   * The webhook endpoints, as a JSON array of `{ name, url, types, finality, secrets? }`. Deployed stages set it from
   * HATCHERY_WEBHOOKS and link each endpoint's secrets from SST secrets; on the local stack `secrets` is given inline.
   */
  WEBHOOK_ENDPOINTS: z.optional(z.string()),
  /** How long a delivery is tried again, with backoff, before it is dead-lettered. */
  WEBHOOK_RETRY_HOURS: wholeNumber(24, 1),
  /** Set on deployed stages: endpoints must be public https:// addresses. The local stack leaves it unset. */
  WEBHOOK_DEPLOYED: z._default(z.enum(['true', 'false']), 'false'),
});

/**
 * The SST secrets that hold a deployed endpoint's signing secrets (infra/webhooks.ts links them to the listener): the
 * current one, and the next during a rotation (empty otherwise). `game-server` is WebhookGameServerSecret.
 */
export function webhookSecretNames(endpoint: string): { current: string; next: string } {
  const pascal = endpoint
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
  return { current: `Webhook${pascal}Secret`, next: `Webhook${pascal}NextSecret` };
}
