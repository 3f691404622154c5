import { GoneException, LimitExceededException } from '@aws-sdk/client-apigatewaymanagementapi';
import { ConditionalCheckFailedException, InternalServerError, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { isThrottlingError } from '@smithy/core/retry';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { xrayDaemon } from '../../support/bundles';

/**
 * The subsegment documents platform/telemetry/tracing.ts sends the X-Ray
 * daemon, read off a UDP socket: nesting, times, a failure recorded as the
 * X-Ray SDK records it, and a send that fails never failing the traced call.
 */
let daemon: Awaited<ReturnType<typeof xrayDaemon>>;
let tracing: typeof import('@hatchery/platform/telemetry/tracing');
let middleware: typeof import('@hatchery/functions/middleware/tracing');
const daemonAddress = () => `tcp:127.0.0.1:1 udp:127.0.0.1:${daemon.port}`;

beforeAll(async () => {
  daemon = await xrayDaemon();
  vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'unit');
  vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', daemonAddress());
  vi.stubEnv('_HANDLER', 'index.handler');
  vi.resetModules();
  tracing = await import('@hatchery/platform/telemetry/tracing');
  middleware = await import('@hatchery/functions/middleware/tracing');
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await daemon?.close();
});

/** Waits for `count` documents at the daemon (the timeout only ends a wait for ones that never come), and takes them all. */
const received = async (count: number) => {
  await vi.waitFor(() => expect(daemon.documents.length).toBeGreaterThanOrEqual(count), { timeout: 10_000 });
  return daemon.documents.splice(0);
};

describe('X-Ray subsegments', () => {
  it('reads the daemon address in both of its forms', () => {
    expect(tracing.daemonAddress('169.254.79.129:2000')).toEqual({ host: '169.254.79.129', port: 2000 });
    expect(tracing.daemonAddress('tcp:127.0.0.1:2000 udp:127.0.0.2:2001')).toEqual({ host: '127.0.0.2', port: 2001 });
  });

  it('nests a traced call in the handler subsegment, under the facade segment, and records a failure as a fault', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    const invocation = tracing.startInvocationTrace();
    await tracing.traced('DynamoDB', async () => 'ok', { namespace: 'aws', aws: { operation: 'GetItem' } });
    await expect(tracing.traced('postgres query', () => Promise.reject(Object.assign(new Error('boom'), { name: 'QueryError' })))).rejects.toThrow('boom');
    invocation.end();
    const [handler] = await received(1);
    const [aws, failed] = handler!.subsegments as Record<string, unknown>[];
    expect(handler).toMatchObject({
      type: 'subsegment',
      name: '## index.handler',
      parent_id: '53995c3f42cd8ad8',
      trace_id: '1-6759e988-bd862e3fe1be46a994272793',
      annotations: { ColdStart: true, Service: 'hatchery' },
    });
    expect(aws).toMatchObject({ name: 'DynamoDB', namespace: 'aws', aws: { operation: 'GetItem' } });
    expect(aws).not.toHaveProperty('fault');
    expect(failed).toMatchObject({
      name: 'postgres query',
      namespace: 'remote',
      fault: true,
      cause: { exceptions: [{ message: 'boom', type: 'QueryError' }] },
    });
    for (const document of [aws, failed, handler]) {
      expect(document!.id).toMatch(/^[0-9a-f]{16}$/);
      expect(document!.end_time as number).toBeGreaterThanOrEqual(document!.start_time as number);
    }
  });

  it('sends the calls beyond the first ones in documents of their own, naming the handler subsegment as their parent', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272796;Parent=53995c3f42cd8ad8;Sampled=1');
    const invocation = tracing.startInvocationTrace();
    for (let i = 0; i < tracing.embeddedSubsegments + 3; i++)
      await tracing.traced('ApiGatewayManagementApi', async () => i, { namespace: 'aws', aws: { operation: 'PostToConnection' } });
    invocation.end();
    const documents = await received(4);
    const handler = documents.find((document) => document.name === '## index.handler')!;
    expect(handler.subsegments).toHaveLength(tracing.embeddedSubsegments);
    const apart = documents.filter((document) => document !== handler);
    expect(apart.map((document) => [document.type, document.parent_id, document.trace_id])).toEqual(
      Array(3).fill(['subsegment', handler.id, handler.trace_id]),
    );
    expect(JSON.stringify(handler).length).toBeLessThan(64 * 1024);
  });

  it('sends nothing for a request X-Ray did not sample, and no ColdStart after the first invocation', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272794;Parent=53995c3f42cd8ad8;Sampled=0');
    const unsampled = tracing.startInvocationTrace();
    await tracing.traced('postgres query', async () => 1);
    unsampled.end();
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272795;Parent=53995c3f42cd8ad8;Sampled=1');
    const sampled = tracing.startInvocationTrace();
    sampled.end();
    const documents = await received(1);
    expect(documents.map((document) => [document.trace_id, (document.annotations as { ColdStart: boolean }).ColdStart])).toEqual([
      ['1-6759e988-bd862e3fe1be46a994272795', false],
    ]);
  });

  it('records a failed call as the X-Ray SDK does: a 4xx an error, a throttled call a throttle, a 5xx or no answer a fault', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272797;Parent=53995c3f42cd8ad8;Sampled=1');
    const $metadata = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });
    const failures: [string, unknown][] = [
      ['condition failed', new ConditionalCheckFailedException({ message: 'The conditional request failed', ...$metadata(400) })],
      ['gone', new GoneException({ message: 'gone', ...$metadata(410) })],
      ['throttled (400)', new ProvisionedThroughputExceededException({ message: 'slow down', ...$metadata(400) })],
      ['throttled (429)', new LimitExceededException({ message: 'limit', ...$metadata(429) })],
      ['server', new InternalServerError({ message: 'internal', ...$metadata(500) })],
      ['no answer', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
      ['not an error', 'a string'],
    ];
    const invocation = tracing.startInvocationTrace();
    for (const [name, failure] of failures) await expect(tracing.traced(name, () => Promise.reject(failure))).rejects.toBe(failure);
    invocation.end();
    const [handler] = await received(1);
    const outcome = (segment: Record<string, unknown>) => [
      segment.name,
      segment.error ?? false,
      segment.throttle ?? false,
      segment.fault ?? false,
      (segment.http as { response?: { status?: number } })?.response?.status,
    ];
    expect((handler!.subsegments as Record<string, unknown>[]).map(outcome)).toEqual([
      ['condition failed', true, false, false, 400],
      ['gone', true, false, false, 410],
      ['throttled (400)', true, true, false, 400],
      ['throttled (429)', true, true, false, 429],
      ['server', false, false, true, 500],
      ['no answer', false, false, true, undefined],
      ['not an error', false, false, true, undefined],
    ]);
    expect((handler!.subsegments as { cause: unknown }[])[0]!.cause).toMatchObject({
      exceptions: [{ type: 'ConditionalCheckFailedException', message: 'The conditional request failed' }],
    });
    expect((handler!.subsegments as { cause: unknown }[])[6]!.cause).toMatchObject({ exceptions: [{ type: 'Error', message: 'a string' }] });
  });

  it("counts as a throttle exactly what the SDK's retry counts as throttling", async () => {
    const { THROTTLING_ERROR_CODES } = await import(
      '../../../node_modules/@smithy/core/dist-es/submodules/retry/service-error-classification/constants.js' as string
    );
    const names = [
      ...(THROTTLING_ERROR_CODES as string[]),
      'ConditionalCheckFailedException',
      'GoneException',
      'ValidationException',
      'InternalServerError',
      'Error',
    ];
    const errors = names.flatMap((name) => [400, 429, 500].map((httpStatusCode) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode } })));
    errors.push(Object.assign(new Error('retryable'), { name: 'SomeThrottle', $retryable: { throttling: true }, $metadata: { httpStatusCode: 400 } }));
    for (const error of errors)
      expect(Boolean(tracing.outcomeOf(error).throttle), `${error.name} ${error.$metadata.httpStatusCode}`).toBe(
        isThrottlingError(error as Parameters<typeof isThrottlingError>[0]),
      );
  });

  it('never fails the traced call, nor the invocation, when a document cannot be sent: a bad port, a host that does not resolve', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272798;Parent=53995c3f42cd8ad8;Sampled=1');
    const tooLarge = 'x'.repeat(70 * 1024);
    for (const address of ['127.0.0.1:70000', 'udp:no-such-daemon.invalid:2000', daemonAddress()]) {
      vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', address);
      const invocation = tracing.startInvocationTrace();
      // The calls beyond the embedded ones are sent as they end, from inside traced().
      for (let i = 0; i < tracing.embeddedSubsegments; i++) await tracing.traced('postgres query', async () => i);
      await expect(tracing.traced('postgres query', async () => 'answered')).resolves.toBe('answered');
      await expect(tracing.traced('DynamoDB', async () => 'large', { namespace: 'aws', aws: { operation: 'GetItem', note: tooLarge } })).resolves.toBe('large');
      expect(() => invocation.end()).not.toThrow();
    }
    // Only the last run reached the daemon: the two calls sent apart (the large one cut to fit a datagram), then the handler's document.
    const documents = await received(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([...documents, ...daemon.documents.splice(0)].map((document) => [document.name, document.trace_id])).toEqual([
      ['postgres query', '1-6759e988-bd862e3fe1be46a994272798'],
      ['DynamoDB', '1-6759e988-bd862e3fe1be46a994272798'],
      ['## index.handler', '1-6759e988-bd862e3fe1be46a994272798'],
    ]);
  });

  it('keeps a document too large for a datagram, an error message of 70 KB cut, its ids and the rest whole', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a994272799;Parent=53995c3f42cd8ad8;Sampled=1');
    const long = (name: string) => Object.assign(new Error(`${name} `.repeat(6 * 1024)), { name });
    const invocation = tracing.startInvocationTrace();
    await expect(tracing.traced('DynamoDB', () => Promise.reject(long('CallFailed')), { namespace: 'aws', aws: { operation: 'Query' } })).rejects.toThrow();
    await tracing.traced('postgres query', async () => 1);
    invocation.end(long('HandlerFailed'));
    const [handler] = await received(1);
    expect(handler).toMatchObject({
      name: '## index.handler',
      trace_id: '1-6759e988-bd862e3fe1be46a994272799',
      parent_id: '53995c3f42cd8ad8',
      fault: true,
      annotations: { ColdStart: false, Service: 'hatchery' },
    });
    const [call, query] = handler!.subsegments as Record<string, unknown>[];
    expect(call).toMatchObject({ name: 'DynamoDB', fault: true, aws: { operation: 'Query' } });
    expect(query).toMatchObject({ name: 'postgres query' });
    for (const [document, name] of [
      [handler!, 'HandlerFailed'],
      [call!, 'CallFailed'],
    ] as const) {
      const [exception] = (document.cause as { exceptions: { message: string; type: string; id: string }[] }).exceptions;
      expect(exception!.type).toBe(name);
      expect(exception!.id).toMatch(/^[0-9a-f]{16}$/);
      expect(exception!.message.startsWith(`${name} ${name} `)).toBe(true);
      expect(exception!.message).toMatch(/… \(cut from \d+ characters\)$/);
    }
    expect(Buffer.byteLength(JSON.stringify(handler))).toBeLessThan(tracing.maxDatagramBytes);
  });

  it('sends the embedded calls apart, naming the handler subsegment, when cutting strings cannot make its document fit', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a99427279a;Parent=53995c3f42cd8ad8;Sampled=1');
    // Short strings, but many of them: 50 calls of 500 table names each.
    const tables = Array.from({ length: 500 }, (_, i) => `table-${i}`);
    const invocation = tracing.startInvocationTrace();
    for (let i = 0; i < tracing.embeddedSubsegments; i++)
      await tracing.traced('DynamoDB', async () => i, { namespace: 'aws', aws: { operation: 'BatchGetItem', table_names: tables } });
    invocation.end();
    const documents = await received(1 + tracing.embeddedSubsegments);
    const handler = documents.find((document) => document.name === '## index.handler')!;
    expect(handler).toMatchObject({ trace_id: '1-6759e988-bd862e3fe1be46a99427279a', parent_id: '53995c3f42cd8ad8' });
    expect(handler).not.toHaveProperty('subsegments');
    const calls = documents.filter((document) => document !== handler);
    expect(calls).toHaveLength(tracing.embeddedSubsegments);
    for (const call of calls) {
      expect(call).toMatchObject({
        type: 'subsegment',
        name: 'DynamoDB',
        parent_id: handler.id,
        trace_id: handler.trace_id,
        aws: { operation: 'BatchGetItem' },
      });
      expect((call.aws as { table_names: string[] }).table_names.at(-1)).toBe('… (436 more)');
    }
  });
});

describe('traceInvocation', () => {
  /** Middy's request, as far as the middleware reads it. */
  const request = (error?: Error) => ({ event: {}, context: {} as Context, response: undefined, error, internal: {} });

  it("opens the invocation's subsegment before the handler and sends it when the invocation answers, holding its calls", async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a99427279b;Parent=53995c3f42cd8ad8;Sampled=1');
    const trace = middleware.traceInvocation();
    const answered = request();
    await trace.before!(answered);
    await tracing.traced('postgres query', async () => 1);
    await trace.after!(answered);
    const [handler] = await received(1);
    expect(handler).toMatchObject({ name: '## index.handler', trace_id: '1-6759e988-bd862e3fe1be46a99427279b', parent_id: '53995c3f42cd8ad8' });
    expect(handler).not.toHaveProperty('fault');
    expect((handler!.subsegments as { name: string }[]).map(({ name }) => name)).toEqual(['postgres query']);
  });

  it('records the error of an invocation that failed on its subsegment', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-6759e988-bd862e3fe1be46a99427279c;Parent=53995c3f42cd8ad8;Sampled=1');
    const trace = middleware.traceInvocation();
    const failed = request(Object.assign(new Error('the handler failed'), { name: 'HandlerError' }));
    await trace.before!(failed);
    await trace.onError!(failed);
    const [handler] = await received(1);
    expect(handler).toMatchObject({
      trace_id: '1-6759e988-bd862e3fe1be46a99427279c',
      fault: true,
      cause: { exceptions: [{ message: 'the handler failed', type: 'HandlerError' }] },
    });
  });
});
