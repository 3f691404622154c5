import type { LookupAddress, LookupOptions } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { isPublicAddress, lookupPublicAddress } from '@hatchery/core/webhooks/address-policy';

const refused = [
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['::1', 'loopback'],
  ['169.254.169.254', 'the metadata address'],
  ['169.254.0.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['224.0.0.1', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
  ['2002:a00:1::', '6to4 of a private address'],
  ['localhost', 'a name, not an address'],
  ['', 'nothing'],
] as const;

const allowed = [
  ['8.8.8.8', 'public IPv4'],
  ['172.32.0.1', 'just past 172.16/12'],
  ['100.128.0.1', 'just past 100.64/10'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'NAT64 of a public address'],
] as const;

type Answer = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number | undefined };
const resolve = (hostname: string, options: LookupOptions) =>
  new Promise<Answer>((done) => lookupPublicAddress(hostname, options, (error, address, family) => done({ error, address, family })));

describe('the address policy', () => {
  it.each(refused)('refuses %s (%s)', (ip) => expect(isPublicAddress(ip)).toBe(false));
  it.each(allowed)('allows %s (%s)', (ip) => expect(isPublicAddress(ip)).toBe(true));

  it('resolves a host name and refuses it for a loopback address, with its own error code', async () => {
    const { error } = await resolve('localhost', {});
    expect(error?.code).toBe('EWEBHOOKADDRESS');
    expect(error?.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/);
    expect((await resolve('::ffff:169.254.169.254', { all: true })).error?.code).toBe('EWEBHOOKADDRESS');
  });

  it('answers a public address in the form node asked for: one address, or all of them', async () => {
    expect(await resolve('8.8.8.8', {})).toEqual({ error: null, address: '8.8.8.8', family: 4 });
    expect(await resolve('8.8.8.8', { all: true })).toEqual({ error: null, address: [{ address: '8.8.8.8', family: 4 }], family: undefined });
  });

  it('passes a DNS failure on as it is', async () => {
    const { error } = await resolve('no-such-host.invalid', {});
    expect(error?.code).not.toBe('EWEBHOOKADDRESS');
    expect(error?.code).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
  });
});
