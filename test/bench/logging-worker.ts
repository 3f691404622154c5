import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { pino } from 'pino';
import { addLogContext, clearLogContext, logger, redactedPaths } from '@hatchery/platform/telemetry/logger';

/**
 * Run by logging.ts in a process of its own, its stdout discarded: writes the
 * one line a request logs, LOGGING_REQUESTS times, with the logger named by
 * LOGGING_CANDIDATE, and reports the CPU it took on stderr.
 */
const requests = Number(process.env.LOGGING_REQUESTS ?? 20_000);
const candidate = process.env.LOGGING_CANDIDATE;

const fields = (i: number) => ({
  requestId: `c0ffee00-0000-4000-8000-${String(i).padStart(12, '0')}`,
  route: 'GET /accounts/me',
  accountId: `user-${i % 100}`,
});

const candidates: Record<string, (i: number) => void> = {
  /** What the service does now: Powertools Logger with its formatter (redaction) and synchronous writer, the invocation's fields appended as keys. */
  'service logger (Powertools)': (i) => {
    addLogContext(fields(i));
    logger().info({ status: 200, durationMs: 3 }, 'request');
    clearLogContext();
  },
  /** What it did before its own logger: pino, the same fields through its mixin, the same redaction, synchronous writes. */
  'pino (mixin + redact)': (() => {
    let context: ReturnType<typeof fields> | undefined;
    const root = pino({ level: 'info', base: { service: 'hatchery' }, mixin: () => context ?? {}, redact: { paths: redactedPaths, censor: '[redacted]' } });
    return (i: number) => {
      context = fields(i);
      root.info({ status: 200, durationMs: 3 }, 'request');
      context = undefined;
    };
  })(),
  /** What it did before: a child logger per request carrying the fields. */
  'pino (child per request)': (() => {
    const root = pino({ level: 'info', base: { service: 'hatchery' } });
    return (i: number) => root.child(fields(i)).info({ status: 200, durationMs: 3 }, 'request');
  })(),
  /** Powertools Logger as its documentation shows it for per-request keys. */
  'Powertools Logger (appendKeys)': (() => {
    const powertools = new PowertoolsLogger({ serviceName: 'hatchery', logLevel: 'INFO' });
    return (i: number) => {
      powertools.appendKeys(fields(i));
      powertools.info('request', { status: 200, durationMs: 3 });
      powertools.resetKeys();
    };
  })(),
};

const write = candidates[candidate ?? ''];
if (!write) throw new Error(`unknown candidate ${candidate}; have ${Object.keys(candidates).join(', ')}`);
for (let i = 0; i < 2_000; i++) write(i);
const cpu = process.cpuUsage();
const started = performance.now();
for (let i = 0; i < requests; i++) write(i);
const used = process.cpuUsage(cpu);
process.stderr.write(`${JSON.stringify({ cpuUs: (used.user + used.system) / requests, wallUs: ((performance.now() - started) * 1000) / requests })}\n`);
