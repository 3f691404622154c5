import { pino, type DestinationStream, type Logger } from 'pino';
import { invocationScoped } from './invocation';

/** What identifies the invocation in every line logged while it runs, from whichever module logs it. */
export interface LogContext {
  requestId?: string;
  route?: string;
  /** The caller's account id, once the token is verified. */
  accountId?: string;
  connectionId?: string;
}

const invocation = invocationScoped<LogContext>('hatchery.logContext', () => ({}));

export function addLogContext(fields: LogContext): void {
  Object.assign(invocation.get(), fields);
}

export function clearLogContext(): void {
  invocation.reset();
}

/**
 * Where a bearer token or a wallet signature could sit in what is logged, if
 * anyone ever logged a request. Named paths, not wildcards: a `*.` path
 * doubled the CPU of a log line in `npm run bench` (logging).
 */
export const redactedPaths = ['authorization', 'token', 'signature', 'headers.authorization', 'body.signature', 'body.token'];

let root: Logger | undefined;
let destination: DestinationStream | undefined;

/** One JSON logger per process; level from LOG_LEVEL (read directly so logging never depends on a valid config). */
export function logger(): Logger {
  const options = {
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'hatchery' },
    mixin: () => invocation.get(),
    redact: { paths: redactedPaths, censor: '[redacted]' },
  };
  root ??= destination ? pino(options, destination) : pino(options);
  return root;
}

/** Sends the logs elsewhere (the local stack's readable terminal output); call before the first log line. */
export function useLogDestination(stream: DestinationStream): void {
  destination = stream;
  root = undefined;
}

export type { Logger };
