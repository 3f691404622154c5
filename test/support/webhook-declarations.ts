/**
 * A stage's webhook declarations as docs/deploying.md writes them, with the stage's secrets, and the declarations a
 * deployed stage refuses: the rules' own test (test/unit/infra/deploy-settings.test.ts) and the deploy's
 * (test/deploy/webhooks.test.ts) read the same.
 */
import { randomBytes } from 'node:crypto';
import { webhookSecretNames } from '@hatchery/platform/config/events';
import { docBlock } from './docs';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** docs/deploying.md's example: the declaration it exports, and the secrets it sets. */
export const example = docBlock('webhooks-deploy').text;
export const declaration = /^export HATCHERY_WEBHOOKS='([^']*)'$/m.exec(example)?.[1] ?? '';
export const declared = JSON.parse(declaration) as { name: string; url: string; types: string[]; finality: string }[];
export const endpointNames = declared.map(({ name }) => name);

/** Each endpoint's secrets as the stage holds them: `game` mid-rotation (a next secret set), `leaderboard` with its current one only. */
export const signing = { game: [newSecret(), newSecret()], leaderboard: [newSecret()] } as Record<string, string[]>;
export const sstSecret = (name: string) => `SST_SECRET_${name}`;
export const endpointSecrets = Object.fromEntries(
  Object.entries(signing).flatMap(([endpoint, [current, next]]) => [
    [sstSecret(webhookSecretNames(endpoint).current), current!],
    ...(next ? [[sstSecret(webhookSecretNames(endpoint).next), next]] : []),
  ]),
) as Record<string, string>;

export const oneEndpoint = (url: string) => JSON.stringify([{ name: 'game', url, types: ['forge.fulfilled'], finality: 'latest' }]);

/** Each address a deployed stage refuses as written, and the reason its error must give. */
export const unsafeAddresses = {
  http: { url: 'http://game.example.com/hooks', reason: /url: must begin with https:\/\/ in a deployed stage/ },
  loopback: { url: 'https://127.0.0.1/hooks', reason: /url: 127\.0\.0\.1 is not a public address: a deployed stage refuses it/ },
  private: { url: 'https://10.0.0.1/hooks', reason: /url: 10\.0\.0\.1 is not a public address: a deployed stage refuses it/ },
  metadata: { url: 'https://169.254.169.254/latest/meta-data/', reason: /url: 169\.254\.169\.254 is not a public address: a deployed stage refuses it/ },
  ipv6Loopback: { url: 'https://[::1]/hooks', reason: /url: ::1 is not a public address: a deployed stage refuses it/ },
};

/** An address a deployed stage refuses once its name is resolved, from the deploying machine. */
export const resolvesPrivate = {
  url: 'https://localhost/hooks',
  reason: /url: localhost resolves to (127\.0\.0\.1|::1), which is not a public address: a deployed stage refuses it/,
};

export const malformedSecret = 'hunter2-is-no-webhook-secret';

/** Declarations a deployed stage refuses for their secrets, by what is wrong with them. */
export const secretMistakes = {
  /** `game`'s current secret malformed, `leaderboard`'s next the same as its current. */
  badSecrets: {
    ...endpointSecrets,
    [sstSecret(webhookSecretNames('game').current)]: malformedSecret,
    [sstSecret(webhookSecretNames('leaderboard').next)]: signing.leaderboard![0]!,
    HATCHERY_WEBHOOKS: declaration,
  },
  inlineSecrets: {
    ...endpointSecrets,
    HATCHERY_WEBHOOKS: JSON.stringify(declared.map((endpoint) => ({ ...endpoint, secrets: signing[endpoint.name] }))),
  },
  /** `game`'s next secret is `game-next`'s current one by name. */
  sharedSecretNames: { ...endpointSecrets, HATCHERY_WEBHOOKS: JSON.stringify([declared[0], { ...declared[0], name: 'game-next' }]) },
};
