import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sstResolution } from '../../support/bundles';

const run = promisify(execFile);

/** log-calls.ts bundled once, as a function's code is: each case then starts a plain node on it. */
let calls: string;
const work = mkdtempSync(join(tmpdir(), 'hatchery-log-calls-'));
beforeAll(async () => {
  calls = join(work, 'log-calls.mjs');
  await build({
    ...sstResolution,
    entryPoints: ['test/unit/telemetry/log-calls.ts'],
    outfile: calls,
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The lines Powertools Logger writes for the service, read from the stdout of
 * a fresh process (log-calls.ts: two invocations of a Middy chain, then a
 * line outside them), in the environment Lambda gives a function.
 */
async function logLines(env: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  const { stdout } = await run(process.execPath, [calls], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_LAMBDA_FUNCTION_NAME: 'calls-function',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      _X_AMZN_TRACE_ID: 'Root=1-6759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      ...env,
    },
    timeout: 60_000,
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const messages = (lines: Record<string, unknown>[]) => lines.map((line) => [line.level, line.message]);

describe('log lines', () => {
  it("carry the level by name, the message, the time, the service, the Lambda request id, the cold start and the trace id, then the invocation's keys", async () => {
    const lines = await logLines({ LOG_LEVEL: 'debug' });
    const [first] = lines;
    expect(Object.keys(first!).slice(0, 8)).toEqual([
      'level',
      'message',
      'timestamp',
      'service',
      'cold_start',
      'function_name',
      'function_request_id',
      'xray_trace_id',
    ]);
    expect(first).toMatchObject({
      level: 'INFO',
      message: 'values',
      service: 'hatchery',
      cold_start: true,
      function_name: 'calls-function',
      xray_trace_id: '1-6759e988-bd862e3fe1be46a994272793',
      requestId: 'request-1',
      route: 'GET /calls',
    });
    expect(new Date(first!.timestamp as string).toISOString()).toBe(first!.timestamp);
    const first6 = lines.slice(0, 6);
    const second6 = lines.slice(6, 12);
    expect(new Set(first6.map((line) => line.function_request_id)).size).toBe(1);
    expect(second6.every((line) => line.cold_start === false && line.requestId === 'request-2')).toBe(true);
    expect(second6[0]!.function_request_id).not.toBe(first6[0]!.function_request_id);
    expect(lines[5]).toMatchObject({ message: 'child line', component: 'calls', requestId: 'request-1', function_request_id: first6[0]!.function_request_id });
    // After the invocations, none of their keys.
    expect(lines.at(-1)).toMatchObject({ level: 'INFO', message: 'outside', service: 'hatchery' });
    for (const key of ['requestId', 'route']) expect(lines.at(-1)).not.toHaveProperty(key);
  });

  it('never throw on a BigInt, a circular object or an error with a cause (or that is its own): each is written', async () => {
    const [values, failed, selfCaused] = await logLines();
    expect(values).toMatchObject({ message: 'values', blockNumber: '23456789', circular: { name: 'loop' } });
    expect(values!.circular).not.toHaveProperty('self');
    expect(failed).toMatchObject({
      level: 'ERROR',
      message: 'failed',
      err: { name: 'Error', message: 'read failed', cause: { name: 'Error', message: 'socket hang up', code: 'ECONNRESET' } },
    });
    expect((failed!.err as { stack: string }).stack).toMatch(/^Error: read failed\n\s+at /);
    expect(selfCaused).toMatchObject({ level: 'ERROR', err: { message: 'its own cause', cause: { message: 'its own cause', cause: '[circular]' } } });
  });

  it('redact tokens and signatures at the named paths', async () => {
    const lines = await logLines();
    const secrets = lines.find((line) => line.message === 'secrets');
    expect(secrets).toMatchObject({
      level: 'WARN',
      authorization: '[redacted]',
      token: '[redacted]',
      headers: { authorization: '[redacted]', host: 'h' },
      body: { signature: '[redacted]', address: '0xabc' },
    });
    expect(JSON.stringify(lines)).not.toMatch(/secret-[abcd]/);
  });

  it('follow LOG_LEVEL (pino names too, in any case), POWERTOOLS_LOG_LEVEL first; an unknown name means INFO', async () => {
    const all = ['INFO values', 'ERROR failed', 'ERROR self-caused', 'WARN secrets', 'DEBUG detail', 'INFO child line'];
    const atInfo = all.filter((line) => !line.startsWith('DEBUG'));
    const seen = async (env: Record<string, string>) => messages(await logLines(env)).map((pair) => pair.join(' '));
    expect(await seen({ LOG_LEVEL: 'debug' })).toEqual([...all, ...all, 'INFO outside']);
    expect(await seen({})).toEqual([...atInfo, ...atInfo, 'INFO outside']);
    for (const name of ['verbose', 'constructor', 'toString']) expect(await seen({ LOG_LEVEL: name }), name).toEqual([...atInfo, ...atInfo, 'INFO outside']);
    expect(await seen({ LOG_LEVEL: 'silent' })).toEqual([]);
    expect(await seen({ LOG_LEVEL: 'fatal' })).toEqual([]);
    expect(await seen({ LOG_LEVEL: 'Error' })).toEqual(['ERROR failed', 'ERROR self-caused', 'ERROR failed', 'ERROR self-caused']);
    expect(await seen({ LOG_LEVEL: 'debug', POWERTOOLS_LOG_LEVEL: 'warn' })).toEqual([
      'ERROR failed',
      'ERROR self-caused',
      'WARN secrets',
      'ERROR failed',
      'ERROR self-caused',
      'WARN secrets',
    ]);
  });

  it("follow Lambda's log-level control (AWS_LAMBDA_LOG_LEVEL) over LOG_LEVEL, and say so once when LOG_LEVEL asks for more", async () => {
    const lines = messages(await logLines({ AWS_LAMBDA_LOG_LEVEL: 'WARN', LOG_LEVEL: 'debug' }));
    expect(lines[0]).toEqual([
      'WARN',
      'Current log level (DEBUG) does not match AWS Lambda Advanced Logging Controls minimum log level (WARN). This can lead to data loss, consider adjusting them.',
    ]);
    const rest = lines.slice(1).map((pair) => pair.join(' '));
    expect(rest).toEqual(['ERROR failed', 'ERROR self-caused', 'WARN secrets', 'ERROR failed', 'ERROR self-caused', 'WARN secrets']);
    expect(messages(await logLines({ AWS_LAMBDA_LOG_LEVEL: 'ERROR' })).map(([level]) => level)).toEqual(['ERROR', 'ERROR', 'ERROR', 'ERROR']);
  });
});

describe('a log call', () => {
  let log: typeof import('@hatchery/platform/telemetry/logger');
  const written: string[] = [];
  /** The one line `call` wrote, parsed (it must be JSON), and its length in bytes. */
  const lineOf = (call: () => void) => {
    written.length = 0;
    expect(call).not.toThrow();
    expect(written).toHaveLength(1);
    const [line] = written;
    return { bytes: Buffer.byteLength(line!), record: JSON.parse(line!) as Record<string, unknown> };
  };

  beforeAll(async () => {
    vi.stubEnv('LOG_LEVEL', 'info');
    log = await import('@hatchery/platform/telemetry/logger');
    log.useLogDestination({ write: (line) => written.push(line) });
  });

  it('never throws, and keeps the rest of the line, on what cannot be read: a getter, a toJSON, a Proxy, a revoked one, an error’s own getters', () => {
    const throwing = (what: string) => () => {
      throw new Error(what);
    };
    const trapped = new Proxy({}, { ownKeys: throwing('ownKeys'), get: throwing('get'), getPrototypeOf: throwing('getPrototypeOf') });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const unreadableStack = Object.defineProperty(new Error('read failed'), 'stack', { get: throwing('stack') });
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    const cases: Array<[string, object, Record<string, unknown>]> = [
      [
        'a getter beside a BigInt and a cycle',
        {
          block: 23456789n,
          loop,
          get boom() {
            return throwing('getter')();
          },
        },
        { block: '23456789', loop: { name: 'loop' }, boom: '[unreadable: Error: getter]' },
      ],
      [
        'a nested getter',
        {
          nested: {
            get boom() {
              return throwing('nested getter')();
            },
          },
        },
        { nested: { boom: '[unreadable: Error: nested getter]' } },
      ],
      ['a toJSON', { value: { toJSON: throwing('toJSON') } }, { value: '[unreadable: Error: toJSON]' }],
      ['a Proxy among the fields', { proxy: trapped }, { proxy: '[unreadable: Error: getPrototypeOf]' }],
      ['a revoked Proxy', { proxy: revoked.proxy }, { proxy: expect.stringContaining('[unreadable: TypeError') }],
      ['an error with a stack that throws', { err: unreadableStack }, { err: { name: 'Error', message: 'read failed', stack: '[unreadable: Error: stack]' } }],
    ];
    for (const [what, fields, expected] of cases) {
      // Its properties copied as they are, getters included, beside one that reads fine.
      const withKept = Object.defineProperties({ kept: 'yes' }, Object.getOwnPropertyDescriptors(fields));
      const { record } = lineOf(() => log.logger().error(withKept, what));
      expect(record, what).toMatchObject({ level: 'ERROR', message: what, service: 'hatchery', kept: 'yes', ...expected });
    }
    // The fields themselves a Proxy, or an object whose toJSON would stand for the whole line.
    expect(lineOf(() => log.logger().warn(trapped, 'a Proxy as the fields')).record).toMatchObject({
      level: 'WARN',
      message: 'a Proxy as the fields',
      fields: '[unreadable: Error: getPrototypeOf]',
    });
    expect(lineOf(() => log.logger().warn(revoked.proxy, 'a revoked Proxy as the fields')).record).toMatchObject({
      level: 'WARN',
      fields: expect.stringContaining('revoked'),
    });
    expect(lineOf(() => log.logger().info({ toJSON: () => 'not a line', kept: 'yes' }, 'toJSON')).record).toMatchObject({
      level: 'INFO',
      message: 'toJSON',
      kept: 'yes',
    });
    expect(
      lineOf(() =>
        log
          .logger()
          .child({
            get bound() {
              return throwing('binding')();
            },
          })
          .info('child'),
      ).record,
    ).toMatchObject({ message: 'child', bound: '[unreadable: Error: binding]' });
  });

  it('is cut below CloudWatch’s 256 KB, as valid JSON that says it was cut: a 1 MB field, a 300 KB message, 100,000 keys', () => {
    const cloudWatchEventBytes = 256 * 1024;
    const field = lineOf(() => log.logger().info({ requestId: 'r-1', body: 'x'.repeat(1024 * 1024), kept: 'yes' }, 'large field'));
    expect(field.bytes).toBeLessThan(cloudWatchEventBytes);
    expect(field.record).toMatchObject({ level: 'INFO', message: 'large field', service: 'hatchery', requestId: 'r-1', kept: 'yes' });
    expect(field.record.truncated).toEqual({ originalBytes: expect.any(Number) });
    expect((field.record.truncated as { originalBytes: number }).originalBytes).toBeGreaterThan(1024 * 1024);
    expect(field.record.body).toMatch(/^x+… \(cut from 1048576 characters\)$/);

    const message = lineOf(() => log.logger().warn({ kept: 'yes' }, 'm'.repeat(300 * 1024)));
    expect(message.bytes).toBeLessThan(cloudWatchEventBytes);
    expect(message.record).toMatchObject({ level: 'WARN', kept: 'yes', truncated: { originalBytes: expect.any(Number) } });
    expect(message.record.message).toMatch(/^m+… \(cut from 307200 characters\)$/);

    const keys = lineOf(() => log.logger().info({ many: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`key${i}`, i])) }, 'many keys'));
    expect(keys.bytes).toBeLessThan(cloudWatchEventBytes);
    expect(keys.record).toMatchObject({ message: 'many keys', truncated: { originalBytes: expect.any(Number) } });

    const small = lineOf(() => log.logger().info({ body: 'x'.repeat(1024) }, 'small'));
    expect(small.record).not.toHaveProperty('truncated');
  });
});
