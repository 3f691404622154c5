import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookHeaders } from '@hatchery/core/webhooks/signature';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const current = secret();
const previous = secret();
const body = JSON.stringify({ type: 'forge.fulfilled', data: { requestId: '7', wallet: '0x0000000000000000000000000000000000000001' } });
const signed = (at = new Date(), secrets = [current, previous], id = 'evt_1_orders') => webhookHeaders({ id, timestamp: at, body, secrets });

describe('the Standard Webhooks signature', () => {
  it('carries the id, the time in seconds, and one v1 signature per secret', () => {
    const headers = signed(new Date('2030-01-01T00:00:00.900Z'));
    expect(headers['webhook-id']).toBe('evt_1_orders');
    expect(headers['webhook-timestamp']).toBe(String(Date.UTC(2030, 0, 1) / 1000));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
  });

  it.each([
    ['current', current],
    ['previous', previous],
  ])('verifies with the %s secret of a rotation alone', (_, key) => {
    expect(new Webhook(key).verify(body, { ...signed() })).toEqual(JSON.parse(body));
  });

  it('verifies a request signed with one secret', () => {
    expect(new Webhook(current).verify(body, { ...signed(new Date(), [current]) })).toEqual(JSON.parse(body));
    expect(() => new Webhook(previous).verify(body, { ...signed(new Date(), [current]) })).toThrow('No matching signature found');
  });

  it('is refused for a changed body', () => {
    const changed = body.replace('"7"', '"8"');
    expect(changed).not.toBe(body);
    expect(() => new Webhook(current).verify(changed, { ...signed() })).toThrow(WebhookVerificationError);
  });

  it('is refused when its timestamp is over 5 minutes old, and accepted just within', () => {
    const ago = (ms: number) => new Date(Date.now() - ms);
    expect(() => new Webhook(current).verify(body, { ...signed(ago(5 * 60_000 + 2_000)) })).toThrow('Message timestamp too old');
    expect(new Webhook(current).verify(body, { ...signed(ago(5 * 60_000 - 2_000)) })).toEqual(JSON.parse(body));
  });

  it('is refused with a wrong secret', () => {
    expect(() => new Webhook(secret()).verify(body, { ...signed() })).toThrow('No matching signature found');
  });

  it('refuses an id with a full stop, which would blur where the signed id ends', () => {
    expect(() => signed(new Date(), [current], 'evt.1')).toThrow('full stop');
    expect(() => signed(new Date(), [])).toThrow('one secret at least');
  });
});
