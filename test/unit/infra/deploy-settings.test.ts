/**
 * The deploy settings' rules (infra/settings.ts), as `sst deploy` reads them from its environment. That a refusal
 * stops the deploy before it creates anything is the deploy's own test (test/deploy/deploy.test.ts, webhooks.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { deploySettings } from '../../../infra/settings';
import {
  declared,
  endpointNames,
  endpointSecrets,
  malformedSecret,
  oneEndpoint,
  secretMistakes,
  signing,
  unsafeAddresses,
} from '../../support/webhook-declarations';

const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    deploySettings(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the settings were accepted');
};

describe('deploy settings', () => {
  it('refuse a value out of its choices, naming the setting', () => {
    expect(refusal({ HATCHERY_NAT: 'nat-gateway' })).toMatch(/^Invalid deploy settings: HATCHERY_NAT: /);
    expect(deploySettings({ HATCHERY_NAT: 'ec2' }).nat).toBe('ec2');
  });

  it('take the declared endpoints without their secrets, which stay the stage’s', () => {
    const settings = deploySettings({ ...endpointSecrets, HATCHERY_WEBHOOKS: JSON.stringify(declared) });
    expect(settings.webhooks.endpoints).toEqual(declared);
    expect(JSON.stringify(settings)).not.toMatch(/whsec_/);
  });
});

describe('a webhook declaration a deployed stage refuses', () => {
  it.each(Object.entries(unsafeAddresses))('refuses %s, naming the endpoint and why', (_name, { url, reason }) => {
    const error = refusal({ ...endpointSecrets, HATCHERY_WEBHOOKS: oneEndpoint(url) });
    expect(error).toMatch(/^Invalid deploy settings: HATCHERY_WEBHOOKS/);
    expect(error).toMatch(new RegExp(`endpoint "game": ${reason.source}`));
  });

  it('refuses a secret written into the setting, a malformed stage secret and a next secret equal to the current, quoting none', () => {
    const inline = refusal(secretMistakes.inlineSecrets);
    expect(inline).toMatch(/^Invalid deploy settings: HATCHERY_WEBHOOKS/);
    for (const endpoint of endpointNames) expect(inline).toContain(`endpoint "${endpoint}" writes its secrets into the setting`);
    const bad = refusal(secretMistakes.badSecrets);
    expect(bad).toMatch(/endpoint "game": secrets\.0: must be whsec_ and the base64 of 24 to 64 random bytes/);
    expect(bad).toMatch(/endpoint "leaderboard": secrets: must hold two different secrets/);
    for (const error of [inline, bad]) for (const secret of [...Object.values(signing).flat(), malformedSecret]) expect(error).not.toContain(secret);
  });

  it('refuses two endpoints whose secrets’ names would be the same', () => {
    expect(refusal(secretMistakes.sharedSecretNames)).toMatch(
      /^Invalid deploy settings: HATCHERY_WEBHOOKS.*: endpoints "game" and "game-next" would share the SST secret WebhookGameNextSecret: rename one$/,
    );
  });
});
