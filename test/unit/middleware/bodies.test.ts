import { describe, expect, it } from 'vitest';
import { AppError, toProblem } from '@hatchery/core/errors';
import { limitBodySize, requestBodyBytes } from '@hatchery/functions/middleware/body-size';
import { requireJsonContentType } from '@hatchery/functions/middleware/json-content-type';
import { httpRequest, thrownBy, type EventParts } from './requests';

/** The request body's checks, each on Middy's request before the handler: its size, and its declared type. */
const bodySizeRefusal = (parts: EventParts) => thrownBy(limitBodySize().before, httpRequest(parts));
const contentTypeRefusal = (parts: EventParts) => thrownBy(requireJsonContentType().before, httpRequest(parts));

describe('limitBodySize', () => {
  it(`accepts a body of ${requestBodyBytes} bytes, and no body at all`, async () => {
    expect(await bodySizeRefusal({ body: 'x'.repeat(requestBodyBytes) })).toBeUndefined();
    expect(await bodySizeRefusal({ body: undefined })).toBeUndefined();
    expect(await bodySizeRefusal({ body: '' })).toBeUndefined();
  });

  it('refuses one byte more with 413, saying how large it was and what is accepted', async () => {
    const error = await bodySizeRefusal({ body: 'x'.repeat(requestBodyBytes + 1) });
    expect(error).toBeInstanceOf(AppError);
    expect(toProblem(error, '/accounts/me/wallet')).toMatchObject({
      status: 413,
      body: {
        title: 'Content too large',
        detail: `The request body is ${requestBodyBytes + 1} bytes; at most ${requestBodyBytes} are accepted.`,
      },
    });
  });

  it('counts the bytes the client sent: a multi-byte character as its bytes, a base64 body as the bytes it encodes', async () => {
    const wide = 'é'.repeat(requestBodyBytes / 2);
    expect(await bodySizeRefusal({ body: wide })).toBeUndefined();
    expect(await bodySizeRefusal({ body: `${wide}x` })).toMatchObject({ kind: 'payloadTooLarge' });
    const encoded = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');
    // Its text is a third longer than the limit, its bytes are not.
    expect(encoded(requestBodyBytes).length).toBeGreaterThan(requestBodyBytes);
    expect(await bodySizeRefusal({ body: encoded(requestBodyBytes), isBase64Encoded: true })).toBeUndefined();
    expect(await bodySizeRefusal({ body: encoded(requestBodyBytes + 1), isBase64Encoded: true })).toMatchObject({ kind: 'payloadTooLarge' });
  });
});

describe('requireJsonContentType', () => {
  const body = '{"address":"0x00"}';

  it('accepts JSON declared as application/json or a +json type, with any parameters, in any case', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON',
      ' application/json ',
      'application/merge-patch+json',
      'application/vnd.api+json;v=1',
    ]) {
      expect(await contentTypeRefusal({ body, headers: { 'content-type': type } }), type).toBeUndefined();
    }
  });

  it('refuses with 415 a body declared as anything else, or not declared', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'application/json-seq',
      'json',
      undefined,
    ]) {
      const error = await contentTypeRefusal({ body, headers: { 'content-type': type } });
      expect(error, String(type)).toBeInstanceOf(AppError);
      expect(toProblem(error, '/accounts/me/wallet'), String(type)).toMatchObject({
        status: 415,
        body: { title: 'Unsupported media type', detail: 'The request body must be JSON, sent as Content-Type: application/json.' },
      });
    }
  });

  it('asks nothing of a request without a body', async () => {
    expect(await contentTypeRefusal({ body: undefined, headers: { 'content-type': 'text/plain' } })).toBeUndefined();
    expect(await contentTypeRefusal({ body: '' })).toBeUndefined();
  });
});
