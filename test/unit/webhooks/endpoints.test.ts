import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkEndpointAddresses, parseEndpoints } from '@hatchery/core/webhooks/endpoints';

const knownTypes = ['forge.fulfilled', 'sale.completed', 'listing.opened'] as const;
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const nextSecret = `whsec_${randomBytes(32).toString('base64')}`;
const endpoint = (fields: Record<string, unknown> = {}) => ({
  name: 'orders',
  url: 'https://hooks.example.com/hatchery',
  types: ['forge.fulfilled'],
  finality: 'finalized',
  secrets: [secret],
  ...fields,
});
const deployed = { deployed: true, knownTypes };
const local = { deployed: false, knownTypes };
const parse = (endpoints: unknown[], rules = deployed) => parseEndpoints(JSON.stringify(endpoints), rules);

/** The error parseEndpoints throws, checked to quote no secret. */
function refusal(endpoints: unknown[], rules = deployed): string {
  let message = '';
  try {
    parse(endpoints, rules);
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).not.toBe('');
  for (const key of [secret, nextSecret]) expect(message).not.toContain(key.slice('whsec_'.length, 'whsec_'.length + 12));
  return message;
}

describe('the webhook endpoints a stage declares', () => {
  it('reads none from an unset or empty setting', () => {
    expect(parseEndpoints(undefined, deployed)).toEqual([]);
    expect(parseEndpoints('', deployed)).toEqual([]);
    expect(parseEndpoints('[]', deployed)).toEqual([]);
  });

  it('reads a well-formed endpoint, and two secrets during a rotation', () => {
    const rotating = endpoint({ name: 'leaderboard-2', types: ['sale.completed', 'listing.opened'], finality: 'latest', secrets: [nextSecret, secret] });
    expect(parse([endpoint(), rotating])).toEqual([endpoint(), rotating]);
  });

  it.each([
    ['http://hooks.example.com/', 'url: must begin with https:// in a deployed stage'],
    ['https://127.0.0.1/', 'url: 127.0.0.1 is not a public address'],
    ['https://10.0.0.1/', 'url: 10.0.0.1 is not a public address'],
    ['https://169.254.169.254/latest/meta-data', 'url: 169.254.169.254 is not a public address'],
    ['https://[::1]:8443/', 'url: ::1 is not a public address'],
    ['https://[::ffff:10.0.0.1]/', 'url: ::ffff:a00:1 is not a public address'],
    ['https://2130706433/', 'url: 127.0.0.1 is not a public address'],
    ['https://user:pass@hooks.example.com/', 'url: holds a user name or password'],
    ['ftp://hooks.example.com/', 'url: must begin with https://'],
    ['hooks.example.com', 'url: is not a URL'],
  ])('refuses %s in a deployed stage', (url, rule) => {
    expect(refusal([endpoint({ url })])).toContain(`- endpoint "orders": ${rule}`);
  });

  it('allows http:// and private addresses on the local stack, and still no credentials', () => {
    for (const url of ['http://127.0.0.1:3000/hook', 'http://localhost:3000/', 'http://10.0.0.1/', 'http://[::1]:8080/'])
      expect(parse([endpoint({ url })], local)).toHaveLength(1);
    expect(refusal([endpoint({ url: 'http://u:p@127.0.0.1/' })], local)).toContain('url: holds a user name or password');
  });

  it('names every endpoint that breaks a rule, and every rule it breaks, in one error', () => {
    const message = refusal([
      endpoint(),
      endpoint({ name: 'Leader Board', url: 'http://10.0.0.1/', types: ['forge.fulfiled', 'sale.completed', 'sale.completed'], finality: 'soon' }),
      { url: 'https://hooks.example.com/', types: [], finality: 'safe', secrets: ['whsec_c2hvcnQ='] },
      endpoint({ secrets: [] }),
    ]);
    expect(message).toBe(
      [
        'WEBHOOK_ENDPOINTS breaks these rules:',
        '- endpoint "Leader Board": name: must be 1 to 40 lower-case letters, digits and hyphens, first a letter or digit; ' +
          'url: must begin with https:// in a deployed stage; url: 10.0.0.1 is not a public address: a deployed stage refuses it; ' +
          'types.0: unknown event type "forge.fulfiled" (known: forge.fulfilled, sale.completed, listing.opened); types.2: sale.completed is named twice; ' +
          'finality: Invalid option: expected one of "latest"|"safe"|"finalized"',
        '- endpoint #3: name: Invalid input: expected string, received undefined; types: must name one event type at least; ' +
          'secrets.0: must be whsec_ and the base64 of 24 to 64 random bytes, not 5',
        '- endpoint "orders": secrets: must hold one secret, or two during a rotation; name: an endpoint before it has the same name',
      ].join('\n'),
    );
  });

  it('refuses secrets that are not Standard Webhooks secrets, or the same secret twice, without quoting them', () => {
    expect(refusal([endpoint({ secrets: [secret.slice('whsec_'.length)] })])).toContain('secrets.0: must be whsec_ and the base64 of 24 to 64 random bytes');
    expect(refusal([endpoint({ secrets: [`${secret.slice(0, -2)}!!`] })])).toContain('secrets.0: must be whsec_');
    expect(refusal([endpoint({ secrets: [secret, secret] })])).toContain('secrets: must hold two different secrets');
    expect(refusal([endpoint({ secrets: [secret, nextSecret, secret] })])).toContain('secrets: must hold one secret, or two during a rotation');
    expect(refusal([endpoint({ secrets: [`whsec_${randomBytes(65).toString('base64')}`] })])).toContain('random bytes, not 65');
  });

  it('refuses a field it does not know, such as a misspelt one', () => {
    const { secrets, ...rest } = endpoint();
    expect(refusal([{ ...rest, secret: secrets[0] }])).toContain('- endpoint "orders": the endpoint: Unrecognized key: "secret"');
  });

  it('takes the secrets of an endpoint that declares none from those linked for it, and refuses one with neither', () => {
    const { secrets, ...rest } = endpoint();
    const linkedSecrets = (name: string) => (name === 'orders' ? secrets : []);
    expect(parseEndpoints(JSON.stringify([rest]), { ...deployed, linkedSecrets })[0]?.secrets).toEqual(secrets);
    expect(refusal([{ ...rest, name: 'other' }])).toContain('- endpoint "other": secrets: none declared, and no secret linked for it');
  });

  it('refuses a setting that is no JSON array, without quoting it', () => {
    expect(() => parseEndpoints(`[{"secrets": ["${secret}"`, deployed)).toThrow(/^WEBHOOK_ENDPOINTS is not valid JSON$/);
    expect(() => parseEndpoints(JSON.stringify(endpoint()), deployed)).toThrow('WEBHOOK_ENDPOINTS must be a JSON array of endpoints');
  });
});

describe('the addresses of the endpoints’ host names', () => {
  const resolvesTo = (answers: Record<string, string[]>) => async (hostname: string) => {
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address }));
  };

  it('refuses, in a deployed stage, localhost, which resolves to a loopback address', async () => {
    await expect(checkEndpointAddresses([{ name: 'orders', url: 'https://localhost/hook' }], { deployed: true })).rejects.toThrow(
      /^WEBHOOK_ENDPOINTS breaks these rules:\n- endpoint "orders": url: localhost resolves to (127\.0\.0\.1|::1), which is not a public address: a deployed stage refuses it$/,
    );
  });

  it('refuses a host name when any of its addresses is private, naming each such endpoint', async () => {
    const lookup = resolvesTo({
      'hooks.example.com': ['93.184.215.14'],
      'internal.example.com': ['93.184.215.15', '10.1.2.3'],
      'meta.example.com': ['169.254.169.254'],
    });
    const endpoints = [
      { name: 'public', url: 'https://hooks.example.com/' },
      { name: 'split', url: 'https://internal.example.com/' },
      { name: 'metadata', url: 'https://meta.example.com/' },
    ];
    await expect(checkEndpointAddresses(endpoints, { deployed: true, lookup })).rejects.toThrow(
      [
        'WEBHOOK_ENDPOINTS breaks these rules:',
        '- endpoint "split": url: internal.example.com resolves to 10.1.2.3, which is not a public address: a deployed stage refuses it',
        '- endpoint "metadata": url: meta.example.com resolves to 169.254.169.254, which is not a public address: a deployed stage refuses it',
      ].join('\n'),
    );
    await expect(checkEndpointAddresses(endpoints.slice(0, 1), { deployed: true, lookup })).resolves.toBeUndefined();
  });

  it('lets a name that does not resolve pass, since each delivery checks its address again', async () => {
    await expect(
      checkEndpointAddresses([{ name: 'gone', url: 'https://gone.example.com/' }], { deployed: true, lookup: resolvesTo({}) }),
    ).resolves.toBeUndefined();
  });

  it('checks nothing on the local stack', async () => {
    await expect(checkEndpointAddresses([{ name: 'orders', url: 'http://localhost:3000/' }], { deployed: false })).resolves.toBeUndefined();
  });
});
