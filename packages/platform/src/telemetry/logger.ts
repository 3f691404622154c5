import { LogFormatter, LogItem, LogLevel, Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { writeLine } from '../stdout';

/** What identifies the invocation in every line logged while it runs, from whichever module logs it. */
export interface LogContext {
  requestId?: string;
  route?: string;
  /** The caller's account id, once the token is verified. */
  accountId?: string;
  connectionId?: string;
}

/**
 * Where a bearer token or a wallet signature could sit in what is logged, if
 * anyone ever logged a request. Named paths, not wildcards: Powertools has no
 * redaction, and walking every object of every line would cost each request.
 */
export const redactedPaths = ['authorization', 'token', 'signature', 'headers.authorization', 'body.signature', 'body.token'];
const censor = '[redacted]';
const redactedKeys = redactedPaths.map((path) => path.split('.') as [string, string | undefined]);

/** Replaces what sits at the redacted paths; a nested object is copied, never changed under its owner. */
function redact(record: LogAttributes): void {
  for (const [head, tail] of redactedKeys) {
    if (!(head in record)) continue;
    const value = record[head];
    if (tail === undefined) record[head] = censor;
    else if (value && typeof value === 'object' && tail in value) record[head] = { ...value, [tail]: censor };
  }
}

/**
 * A line as Powertools' own formatter writes it (`level` by name, as Lambda's
 * JSON log format and its log-level filter read it, `message`, `timestamp`,
 * `service`, the cold start, the function and its request id, the X-Ray trace
 * id), less the function's ARN, memory and sampling rate, which every line
 * would repeat; then the line's fields, redacted.
 */
class ServiceLogFormatter extends LogFormatter {
  /** The errors being formatted: an error that is its own cause, somewhere down the chain, would recurse forever in Powertools. */
  readonly #formatting = new Set<Error>();

  override formatError(error: Error): LogAttributes {
    if (this.#formatting.has(error)) return { name: error.name, message: error.message, cause: '[circular]' };
    this.#formatting.add(error);
    try {
      return super.formatError(error);
    } finally {
      this.#formatting.delete(error);
    }
  }

  formatAttributes(attributes: UnformattedAttributes, fields: LogAttributes): LogItem {
    const item = new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: attributes.lambdaContext?.coldStart,
        function_name: attributes.lambdaContext?.functionName,
        function_request_id: attributes.lambdaContext?.awsRequestId,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes(fields);
    redact(item.getAttributes());
    return item;
  }
}

/** Where the lines go: anything with a `write` (pino-pretty's stream, in the local stack's terminal). */
interface DestinationStream {
  write(line: string): unknown;
}

let destination: DestinationStream | undefined;

/** Sends the lines elsewhere from now on (the local stack's readable terminal output). */
export function useLogDestination(stream: DestinationStream): void {
  destination = stream;
}

/**
 * Powertools Logger, printing through the service's synchronous writer
 * (stdout.ts) instead of the Node Console Powertools builds on stdout (and
 * stderr for warnings and errors): every line leaves on file descriptor 1
 * before Lambda freezes the instance, a request's last lines leave in one
 * write, and the local stack can print them readably. The JSON is still
 * Powertools' own, with its replacer: a BigInt as a string, a circular
 * reference left out, an Error with its name, message, stack and `cause`.
 */
class ServiceLogger extends PowertoolsLogger {
  // No private members: Powertools prints its first lines (a warning about the level) from its constructor, before a subclass's are set.
  protected override printLog(_level: number, log: LogItem): void {
    log.prepareForPrint();
    const line = `${serialize(log.getAttributes(), this.getJsonReplacer())}\n`;
    if (destination) destination.write(line);
    else writeLine(line);
  }
}

/** A log call inside a `catch` must not become a new error: what the replacer cannot write (a getter that throws) leaves the line with its level and message. */
function serialize(attributes: LogAttributes, replacer: (key: string, value: unknown) => unknown): string {
  try {
    return JSON.stringify(attributes, replacer);
  } catch (error) {
    return JSON.stringify({
      level: attributes.level,
      message: attributes.message,
      timestamp: attributes.timestamp,
      service: attributes.service,
      unserializable: String(error),
    });
  }
}

/**
 * The level from POWERTOOLS_LOG_LEVEL or LOG_LEVEL, by pino's names too (the
 * docs' `fatal` … `trace`, `silent`), in any case; an unknown name means INFO,
 * so that logging never depends on a valid configuration. Lambda's own
 * log-level control (AWS_LAMBDA_LOG_LEVEL) overrides it, in Powertools.
 */
function configuredLevel(env: NodeJS.ProcessEnv): keyof typeof LogLevel {
  const name = (env.POWERTOOLS_LOG_LEVEL || env.LOG_LEVEL || '').trim().toUpperCase();
  if (name === 'FATAL') return 'CRITICAL';
  return Object.hasOwn(LogLevel, name) ? (name as keyof typeof LogLevel) : 'INFO';
}

let root: ServiceLogger | undefined;

/** The process's Powertools Logger, which the Middy chains hand each invocation's Lambda context (injectLambdaContext). */
export function powertoolsLogger(): PowertoolsLogger {
  root ??= new ServiceLogger({ serviceName: 'hatchery', logLevel: configuredLevel(process.env), logFormatter: new ServiceLogFormatter() });
  return root;
}

/** Puts the fields on every line logged until the invocation ends (injectLambdaContext's `resetKeys` clears them). */
export function addLogContext(fields: LogContext): void {
  powertoolsLogger().appendKeys(fields as LogAttributes);
}

export function clearLogContext(): void {
  powertoolsLogger().resetKeys();
}

type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * The calls the service makes, in pino's order (fields, then the message),
 * so a pino logger can stand in for it; an Error's key is `err`. A child's
 * bindings go on its own lines; it logs through the process's Powertools
 * Logger, so a child made at import time still carries each invocation's
 * Lambda context and keys.
 */
export type Logger = Record<Level, LogFn> & { child(bindings: Record<string, unknown>): Logger };

function serviceLogger(bindings: Record<string, unknown>): Logger {
  const at =
    (level: Level): LogFn =>
    (fields: object | string, message?: string) => {
      if (typeof fields === 'string') powertoolsLogger()[level](fields, bindings);
      else powertoolsLogger()[level](message ?? '', bindings, fields instanceof Error ? { err: fields } : (fields as LogAttributes));
    };
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: (more) => serviceLogger({ ...bindings, ...more }),
  };
}

const rootLogger = serviceLogger({});

/** The service's logger: JSON lines on stdout, from Powertools Logger. */
export function logger(): Logger {
  return rootLogger;
}
