import { lookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The code of the error a refused address raises, so that a caller tells it from a DNS failure. */
const addressRefusedCode = 'EWEBHOOKADDRESS';

/**
 * Whether a webhook may be sent to this IP address: only a global unicast one. Private, loopback, link-local (with
 * the cloud metadata address 169.254.169.254), unique-local, carrier-grade NAT, unspecified, multicast, broadcast and
 * reserved addresses are not, nor an IPv6 address that carries one of those IPv4 addresses (IPv4-mapped, NAT64). A
 * string that is no IP address is not public either.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.parse(ip);
  if (address instanceof ipaddr.IPv4) return address.range() === 'unicast';
  const range = address.range();
  if (range === 'ipv4Mapped') return address.toIPv4Address().range() === 'unicast';
  // 64:ff9b::/96 reaches the IPv4 address in its last 32 bits through a NAT64 gateway (DNS64 answers so on IPv6-only subnets).
  if (range === 'rfc6052') return ipaddr.fromByteArray(address.toByteArray().slice(12)).range() === 'unicast';
  return range === 'unicast';
}

/** Why a webhook may not go to this host, which is or resolves to this address. */
export function notPublic(host: string, address: string): string {
  return host === address ? `${address} is not a public address` : `${host} resolves to ${address}, which is not a public address`;
}

/**
 * A `lookup` for `http.request`: resolves the host as node would, and refuses it (code EWEBHOOKADDRESS) when any of
 * its addresses is not public. The socket connects to the addresses this answers, so the address checked is the
 * address reached, whatever the name resolves to a moment later (DNS rebinding). Node calls no lookup for a URL whose
 * host is an IP literal: its caller checks that one with `isPublicAddress`.
 */
export const lookupPublicAddress: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '');
    const refused = addresses.find(({ address }) => !isPublicAddress(address));
    if (refused) return callback(Object.assign(new Error(notPublic(hostname, refused.address)), { code: addressRefusedCode }), '');
    if (options.all) return callback(null, addresses);
    const [first] = addresses;
    if (!first) return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), '');
    callback(null, first.address, first.family);
  });
};

/** The IP address a URL's host is written as, without an IPv6 address's brackets; undefined for a host name. */
export function ipLiteral(url: Pick<URL, 'hostname'>): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}
