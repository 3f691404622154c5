import { invocationScoped } from '../invocation';
import { writeLine } from '../stdout';

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
const censor = '[redacted]';

/** pino's levels and numbers: the lines keep pino's shape, which the local stack's pretty printer and the docs read. */
export const levels = { fatal: 60, error: 50, warn: 40, info: 30, debug: 20, trace: 10 } as const;
export type Level = keyof typeof levels;

export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/** The part of pino's logger the service uses, so a pino logger (the tests') can stand in for it. */
export type Logger = Record<Level, LogFn> & { child(bindings: Record<string, unknown>): Logger };

/** Where the lines go: anything with pino's destination's `write` (pino-pretty's stream, locally). */
export interface DestinationStream {
  write(line: string): unknown;
}

/** An Error as pino's `err` serializer writes it: its type, message, stack and own fields (a `code`, a `status`). */
function serializeError(error: Error): object {
  return Object.assign({ type: error.constructor?.name ?? error.name, message: error.message, stack: error.stack }, error);
}

const redactedKeys = redactedPaths.map((path) => path.split('.') as [string, string | undefined]);

function redact(record: Record<string, unknown>): void {
  for (const [head, tail] of redactedKeys) {
    if (!(head in record)) continue;
    if (tail === undefined) record[head] = censor;
    else if (record[head] && typeof record[head] === 'object' && tail in (record[head] as object)) record[head] = { ...(record[head] as object), [tail]: censor };
  }
}

function line(level: number, bindings: Record<string, unknown>, fields: object | string, message: string | undefined): string {
  const record: Record<string, unknown> = { level, time: Date.now(), ...bindings, ...invocation.get() };
  if (typeof fields === 'string') message = fields;
  else if (fields instanceof Error) Object.assign(record, { err: serializeError(fields) });
  else Object.assign(record, fields);
  if (record.err instanceof Error) record.err = serializeError(record.err);
  redact(record);
  if (message !== undefined) record.msg = message;
  return `${JSON.stringify(record)}\n`;
}

/**
 * A JSON-lines logger with pino's line format, written synchronously so a
 * line leaves before Lambda freezes the instance. pino and its writer were
 * 60 KB of every function's bundle for what these few lines do (issue 21).
 */
function createLogger(threshold: number, bindings: Record<string, unknown>, write: (text: string) => void): Logger {
  const log = (level: number): LogFn =>
    level < threshold ? () => undefined : (fields: object | string, message?: string) => write(line(level, bindings, fields, message));
  return {
    fatal: log(levels.fatal),
    error: log(levels.error),
    warn: log(levels.warn),
    info: log(levels.info),
    debug: log(levels.debug),
    trace: log(levels.trace),
    child: (more) => createLogger(threshold, { ...bindings, ...more }, write),
  };
}

/** The level below which nothing is written; an unknown name means info, so that logging never depends on a valid configuration. */
const thresholdOf = (name: string | undefined): number => {
  if (name === 'silent') return Infinity;
  return name !== undefined && Object.hasOwn(levels, name) ? levels[name as Level] : levels.info;
};

let root: Logger | undefined;
let destination: DestinationStream | undefined;

/** One JSON logger per process; level from LOG_LEVEL (read directly so logging never depends on a valid config). */
export function logger(): Logger {
  root ??= createLogger(thresholdOf(process.env.LOG_LEVEL), { service: 'hatchery' }, destination ? (text) => destination!.write(text) : writeLine);
  return root;
}

/** Sends the logs elsewhere (the local stack's readable terminal output); call before the first log line. */
export function useLogDestination(stream: DestinationStream): void {
  destination = stream;
  root = undefined;
}
