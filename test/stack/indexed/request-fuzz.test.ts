import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editionFields } from '@hatchery/core/indexer/editions';
import { forgeRequestFields } from '@hatchery/core/indexer/forge-requests';
import { listingFields } from '@hatchery/core/indexer/listings';
import { nftFields } from '@hatchery/core/indexer/nfts';
import { saleFields } from '@hatchery/core/indexer/sales';
import { stakingFields } from '@hatchery/core/indexer/staking';
import { demoAddress, demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * Whole requests, fuzzed, through the real local gateway over HTTP: no input
 * may reach a 500. Every answer is 2xx/3xx, or a 4xx problem+json
 * that shows neither SQL nor a stack.
 */
let stack: TestStack;
let origin: URL;

beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo });
  origin = new URL(stack.url);
});
afterAll(() => stack?.stop());

const wallet = demoAddress(1);
const listFields = {
  '/editions': editionFields,
  [`/accounts/${wallet}/nfts`]: nftFields,
  '/marketplace/listings': listingFields,
  [`/accounts/${wallet}/staking`]: stakingFields,
  [`/accounts/${wallet}/forge-requests`]: forgeRequestFields,
  '/transparency/sales': saleFields,
};
const lists = Object.keys(listFields);
const others = [
  `/accounts/${wallet}/referral`,
  '/transparency/summary',
  '/accounts/me',
  '/accounts/me/wallet/nonce',
  '/accounts/me/wallet',
  '/openapi.json',
  '/hubs/events/negotiate',
];
const prototypeNames = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'prototype', '__defineGetter__'];
const fieldNames = [...new Set(Object.values(listFields).flatMap(Object.keys))];

interface Response {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** One request with the target sent byte for byte (latin1), so that malformed percent-encoding and raw high bytes reach the server. */
function send(method: string, target: string, headers: Record<string, string>): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: origin.hostname, port: origin.port, method, path: target, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

/** Percent-encodes every byte of a UTF-8 string, keeping unreserved ASCII as it is. */
const encodeBytes = (bytes: Uint8Array) =>
  [...bytes]
    .map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
const encodeText = (text: string) => encodeBytes(new TextEncoder().encode(text));

const controlCharacter = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code));
const filterToken = fc.oneof(
  fc.constantFrom(...fieldNames, ...prototypeNames, ...fieldNames.map((name) => name.toUpperCase())),
  fc.constantFrom('=', '!=', '<', '>', '<=', '>=', '=*', '!*', '^', '!^', '$', '!$', '==', ',', '|', '(', ')', '/i', '\\', ' ', '\t', '[0]', 'null', '#'),
  fc.constantFrom('1', '+1', '-1', '0', 'true', 'TRUE', 'abc', '9'.repeat(80), '2147483648', '0x1F', '1.5', 'Edition 7', '%', '%00', "'", '"', ';', '--'),
  controlCharacter,
  fc.constantFrom('\u0000', '\u0085', '\u00a0', '\u2028', '\ufeff', '\ud800', '\udfff', 'é', '🙂', '\u212a'),
  fc.string({ maxLength: 6 }),
);
const operator = fc.constantFrom('=', '!=', '<', '>', '<=', '>=', '=*', '!*', '^', '!^', '$', '!$');
const valueText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('1', '-7', 'abc', 'Edition 7', 'true', 'Active', wallet, 'null', '') },
      { weight: 2, arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '\u0001', '\u001f', '\u007f', '\ud800', '\u0085', '\\', '\\,') },
      { weight: 2, arbitrary: filterToken },
    ),
    { maxLength: 3 },
  )
  .map((tokens) => tokens.join(''));
const grammarText = fc.array(filterToken, { maxLength: 14 }).map((tokens) => tokens.join(''));

/** Mostly well-formed filters over one list's own fields (in any case), so that values reach the compiler and the database. */
function filterOver(fields: readonly string[]): fc.Arbitrary<string> {
  const fieldName = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fields) },
    { weight: 1, arbitrary: fc.constantFrom(...fields).map((name) => name.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...prototypeNames) },
  );
  const condition = fc.tuple(fc.constantFrom('', ' '), fieldName, operator, valueText, fc.constantFrom('', '/i', ' ')).map((parts) => parts.join(''));
  const { filter } = fc.letrec<{ filter: string }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 3, arbitrary: condition },
      { weight: 2, arbitrary: fc.tuple(tie('filter'), fc.constantFrom(',', '|', ' , '), tie('filter')).map((parts) => parts.join('')) },
      { weight: 1, arbitrary: tie('filter').map((inner) => `(${inner})`) },
    ),
  }));
  return fc.oneof({ weight: 4, arbitrary: filter }, { weight: 1, arbitrary: grammarText });
}

function orderByOver(fields: readonly string[]): fc.Arbitrary<string> {
  const term = fc
    .tuple(fc.constantFrom(...fields, ...prototypeNames, ''), fc.constantFrom('', ' asc', ' desc', ' DESC', '?', '!', '  x desc', '\t'))
    .map((parts) => parts.join(''));
  return fc.oneof(
    fc.array(term, { minLength: 1, maxLength: 3 }).map((terms) => terms.join(',')),
    grammarText,
  );
}

/** A query value as it travels: well-encoded text, raw bytes (invalid UTF-8 included), or broken percent-escapes. */
const encodedValue = fc.oneof(
  grammarText.map(encodeText),
  fc.uint8Array({ maxLength: 24 }).map(encodeBytes),
  fc.constantFrom('%', '%G1', '%C3%28', '%ED%A0%80', '%F0%9F', '%FF%FE', '%E2%82', '%00', '%2', 'a%zz', '%25%', '%C0%AF'),
  fc.string({ unit: fc.constantFrom('%', '0', '0', 'F', 'C', '3', '8', 'a', '=', '&', '+', ';'), maxLength: 12 }),
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 4 }),
);
/** Cursors as a client might hand-edit or forge them: base64url of JSON arrays of anything, padded, or any text. */
const cursorValue = fc.oneof(
  fc
    .array(fc.oneof(fc.string({ maxLength: 14 }), fc.constantFrom('1', '-1', 'true', '9'.repeat(90), "x'; DROP TABLE indexer.sales; --", '\u0000')), {
      maxLength: 4,
    })
    .map((parts) => Buffer.from(JSON.stringify(parts)).toString('base64url')),
  fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? '').toString('base64url')),
  fc.jsonValue().map((value) => `${Buffer.from(JSON.stringify(value) ?? '').toString('base64')}=`),
  encodedValue,
);
const queryName = fc.oneof(
  fc.constantFrom('filter', 'orderBy', 'page', 'pageSize', 'after', 'Filter', 'filter[]'),
  fc.constantFrom(...prototypeNames),
  fc.string({ maxLength: 6 }).map(encodeText),
);
const pageValue = fc.oneof(fc.integer({ min: -5, max: 300 }).map(String), fc.constantFrom('', '1e2', '0x10', ' 1', '1.0', '99999999999999999999', 'NaN'));
const queryPair: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constantFrom('filter', 'orderBy'), encodedValue),
  fc.tuple(fc.constantFrom('page', 'pageSize'), pageValue.map(encodeText)),
  fc.tuple(fc.constant('after'), cursorValue),
  fc.tuple(queryName, encodedValue),
);
const address = fc.oneof(
  fc.constant(wallet),
  fc.constant(wallet.toUpperCase().replace('0X', '0x')),
  fc.constantFrom('0x', 'constructor', '__proto__', '%00', '%FF', '0x' + 'g'.repeat(40), wallet + '%00', '%2e%2e', '..'),
  fc.uint8Array({ maxLength: 10 }).map(encodeBytes),
);
const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...lists) },
  { weight: 2, arbitrary: fc.constantFrom(...others) },
  { weight: 2, arbitrary: fc.tuple(address, fc.constantFrom('nfts', 'staking', 'forge-requests', 'referral')).map(([a, tail]) => `/accounts/${a}/${tail}`) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 12 }).map((bytes) => `/${encodeBytes(bytes)}`) },
);
const listRequest = fc.constantFrom(...lists).chain((list) => {
  const fields = Object.keys(listFields[list]!);
  // One filter and one orderBy at most, mostly: the gateway joins repeated parameters with ',', as API Gateway does.
  const pairs = fc
    .tuple(
      fc.option(
        filterOver(fields).map((filter) => ['filter', encodeText(filter)] as [string, string]),
        { freq: 4 },
      ),
      fc.option(
        orderByOver(fields).map((orderBy) => ['orderBy', encodeText(orderBy)] as [string, string]),
        { freq: 2 },
      ),
      fc.array(queryPair, { maxLength: 1 }),
    )
    .map(([filter, orderBy, rest]): Array<[string, string]> => [...(filter ? [filter] : []), ...(orderBy ? [orderBy] : []), ...rest]);
  return fc.record({ method: fc.constant('GET'), path: fc.constant(list), query: pairs });
});
const anyRequest = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'GET', 'POST', 'DELETE', 'HEAD', 'OPTIONS', 'PUT'),
  path,
  query: fc.array(queryPair, { maxLength: 4 }),
});
const requestArbitrary = fc.record({
  request: fc.oneof({ weight: 3, arbitrary: listRequest }, { weight: 1, arbitrary: anyRequest }),
  headers: fc.record(
    {
      'if-none-match': fc.constantFrom('*', '"x"', 'W/"x"', '', ',,', '"'),
      authorization: fc.constantFrom('Bearer ', 'Bearer x.y.z', 'Basic abc', 'Bearer constructor'),
      origin: fc.constantFrom('null', 'https://evil.test', 'http://[::1]', 'constructor'),
    },
    { requiredKeys: [] },
  ),
});

function expectNoServerError(response: Response, description: string) {
  expect(response.status, `${description} → ${response.status} ${response.body.slice(0, 300)}`).toBeLessThan(500);
  expect(response.status, description).toBeGreaterThanOrEqual(200);
  if (response.status >= 400 && response.body) {
    expect(response.contentType, description).toBe('application/problem+json');
    expect(response.body, description).not.toMatch(/SELECT|indexer\.|\bat [^ ]+\.(ts|js):\d+|node_modules/);
  }
}

describe('no request reaches a 500', () => {
  // Inputs that name an object's built-in members or carry a NUL, on every list: each is a 422, never a 500.
  const known = [
    'filter=constructor=1',
    'filter=__proto__!=null',
    'orderBy=toString',
    'orderBy=constructor',
    'filter=name=a%00b',
    'filter=seller=a%00b',
    'filter=status=%00',
    'filter=hasOwnProperty=1',
  ];
  it.each(lists.flatMap((list) => known.map((query) => `${list}?${query}`)))('GET %s', async (target) => {
    const response = await send('GET', target, {});
    expectNoServerError(response, target);
    expect(response.status).toBe(422);
  });

  it('answers prototype names as query parameter names like any unknown parameter', async () => {
    for (const name of prototypeNames) {
      const response = await send('GET', `/editions?${name}=1&${name}=2`, {});
      expectNoServerError(response, name);
      expect(response.status).toBe(200);
    }
  });

  it('answers a request target that is no URL without failing', async () => {
    const response = await send('GET', 'http://[/editions', {});
    expectNoServerError(response, 'http://[/editions');
  });

  it('answers every fuzzed whole request with 2xx, 3xx or a 4xx problem (property)', async () => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async ({ request: { method, path, query }, headers }) => {
        const target = query.length ? `${path}?${query.map(([name, value]) => `${name}=${value}`).join('&')}` : path;
        const response = await send(method, target, headers);
        expectNoServerError(response, `${method} ${target} ${JSON.stringify(headers)}`);
      }),
      { numRuns: 1000 },
    );
    // A whole HTTP request per run: on a busy machine a thousand take far longer than the default 30 s.
  }, 300_000);
});
