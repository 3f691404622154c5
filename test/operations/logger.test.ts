import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addLogContext, clearLogContext, logger, redactedPaths, useLogDestination, type Logger } from '@hatchery/platform/telemetry/logger';

/**
 * The service's logger writes pino's line format (the local stack's pretty
 * printer and the docs read it): the same calls give the same lines as pino
 * configured as the service once configured it.
 */
function captured(make: (write: (line: string) => void) => Logger): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: make((line) => lines.push(JSON.parse(line) as Record<string, unknown>)), lines };
}

const ours = () =>
  captured((write) => {
    useLogDestination({ write });
    return logger();
  });

const theirs = () =>
  captured((write) =>
    pino(
      { level: 'debug', base: { service: 'hatchery' }, mixin: () => ({ requestId: 'r-1', route: 'GET /editions' }), redact: { paths: redactedPaths, censor: '[redacted]' } },
      { write },
    ),
  );

class CodedError extends Error {
  code = 'E_CODED';
}

const failure = new CodedError('broken');

const calls = (log: Logger) => {
  log.info({ status: 200, durationMs: 3 }, 'request');
  log.debug('a message alone');
  log.trace('below the level');
  log.warn({ authorization: 'Bearer x', headers: { authorization: 'Bearer y', host: 'h' }, body: { signature: '0xsig', other: 1 }, token: 't' }, 'secrets');
  log.error({ err: failure }, 'failed');
  log.child({ component: 'listener' }).info({ n: 1 }, 'child line');
};

describe('logger', () => {
  afterEach(() => {
    clearLogContext();
    vi.unstubAllEnvs();
    vi.useRealTimers();
  });

  it('writes the lines pino writes for the same calls: level, time, service, the invocation context, fields, msg; redacted; errors serialized', () => {
    vi.useFakeTimers({ now: 1_750_000_000_000 });
    vi.stubEnv('LOG_LEVEL', 'debug');
    addLogContext({ requestId: 'r-1', route: 'GET /editions' });
    const a = ours();
    const b = theirs();
    calls(a.log);
    calls(b.log);
    expect(a.lines).toEqual(b.lines);
    expect(a.lines).toHaveLength(5);
    expect(a.lines[2]).toMatchObject({ authorization: '[redacted]', token: '[redacted]', headers: { authorization: '[redacted]', host: 'h' }, body: { signature: '[redacted]', other: 1 } });
    expect(a.lines[3]).toMatchObject({ level: 50, err: { type: 'CodedError', message: 'broken', code: 'E_CODED', stack: failure.stack } });
  });

  it('writes nothing when LOG_LEVEL is silent, and at info when it names no level', () => {
    vi.stubEnv('LOG_LEVEL', 'silent');
    const silent = ours();
    calls(silent.log);
    expect(silent.lines).toEqual([]);
    for (const name of ['verbose', 'constructor', 'toString']) {
      vi.stubEnv('LOG_LEVEL', name);
      const unknown = ours();
      calls(unknown.log);
      expect(unknown.lines.map((line) => line.level), name).toEqual([30, 40, 50, 30]);
    }
  });
});
