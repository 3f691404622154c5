import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/**
 * The lines Powertools Logger writes for the service, read from the stdout of
 * a fresh process (log-calls.ts: two invocations of a Middy chain, then a
 * line outside them), in the environment Lambda gives a function.
 */
async function logLines(env: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/unit/telemetry/log-calls.ts'], {
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
