import { Webhook } from 'standardwebhooks';

/** The headers of the Standard Webhooks specification, as a receiver's `Webhook.verify` reads them. */
interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The headers that sign one attempt: its id (the same on every attempt, the receiver's key to drop a duplicate), its
 * time in seconds, and one `v1,` signature per secret, space-separated, so that during a rotation a receiver that
 * holds either secret verifies it. The id may hold no full stop: the signed content is `id.timestamp.body`.
 */
export function webhookHeaders({ id, timestamp, body, secrets }: { id: string; timestamp: Date; body: string; secrets: readonly string[] }): WebhookHeaders {
  if (id.length === 0 || id.includes('.')) throw new Error(`A webhook id is not empty and holds no full stop: ${JSON.stringify(id)}`);
  if (secrets.length === 0) throw new Error('A webhook is signed with one secret at least');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' '),
  };
}
