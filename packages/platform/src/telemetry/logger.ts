import { LogFormatter, LogItem, LogLevel, LogLevelThreshold, Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { invocationScoped } from '../invocation';
import { writeLine } from '../stdout';
import { exceeds, jsonSafe, shortened } from './json-safe';

/** What identifies the invocation in every line logged while it runs, from whichever module logs it. */
export interface LogContext {
  requestId?: string;
  route?: string;
  /** The caller's account id, once the token is verified. */
  accountId?: string;
  connectionId?: string;
}

/**
 * The running invocation's LogContext. Kept apart from Powertools' keys and
 * put on a line only when one is written: appendKeys deep-merges into a
 * store of keys on every call, and clearing them makes that store anew, which
 * every request paid for the few lines a request writes.
 */
const invocationContext = invocationScoped<LogContext>('hatchery.logContext', () => ({}));

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
    })
      .addAttributes(invocationContext.get() as LogAttributes)
      .addAttributes(fields);
    const written = item.getAttributes();
    // A toJSON among the fields would stand in for the whole line when it is written.
    if ('toJSON' in written) delete written.toJSON;
    redact(written);
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
    const line = `${fitted(serialize(log.getAttributes(), this.getJsonReplacer()))}\n`;
    try {
      if (destination) destination.write(line);
      else writeLine(line);
    } catch {
      // A line stdout refuses (a closed pipe) is lost; the work it describes goes on.
    }
  }
}

/**
 * A log call inside a `catch` must not become a new error: what the replacer
 * cannot write (a toJSON or a getter that throws, a Proxy) is written
 * instead from a copy that reads each value once, guarded (json-safe.ts),
 * which keeps the rest of the line.
 */
function serialize(attributes: LogAttributes, replacer: (key: string, value: unknown) => unknown): string {
  try {
    return JSON.stringify(attributes, replacer);
  } catch {
    const safe: LogAttributes = {};
    for (const [key, value] of Object.entries(attributes)) {
      const written = jsonSafe(value);
      if (written !== undefined) safe[key] = written as LogAttributes[string];
    }
    return JSON.stringify(safe);
  }
}

/**
 * CloudWatch Logs takes events of up to 256 KB (262,144 bytes, 26 of them its
 * own): a longer line would not arrive whole, and what did would not be JSON.
 * A line stops well short of that.
 */
const maxLineBytes = 240 * 1024;

/** What says whose line it is, kept when everything else has to go. */
const headKeys = [
  'level',
  'message',
  'timestamp',
  'service',
  'cold_start',
  'function_name',
  'function_request_id',
  'xray_trace_id',
  'requestId',
  'route',
  'accountId',
  'connectionId',
];

/**
 * `line`, or when it is over maxLineBytes the same JSON with its long strings
 * and its large arrays and objects cut, shorter each round until it fits,
 * and `truncated` saying how long it was; at worst its head alone.
 */
function fitted(line: string): string {
  if (!exceeds(line, maxLineBytes)) return line;
  const record = JSON.parse(line) as Record<string, unknown>;
  const truncated = { originalBytes: Buffer.byteLength(line) };
  for (const maxChars of [16_384, 4_096, 1_024, 256]) {
    const cut = JSON.stringify({ ...(shortened(record, maxChars, Math.max(16, maxChars / 16)) as object), truncated });
    if (!exceeds(cut, maxLineBytes)) return cut;
  }
  const head = Object.fromEntries(headKeys.filter((key) => key in record).map((key) => [key, shortened(record[key], 1_024, 16)]));
  return JSON.stringify({ ...head, truncated });
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

/** Puts the fields on every line logged until the invocation ends (or clearLogContext clears them). */
export function addLogContext(fields: LogContext): void {
  Object.assign(invocationContext.get(), fields);
}

/** Clears the invocation's LogContext: a line logged after it carries none of it. */
export function clearLogContext(): void {
  invocationContext.reset();
}

type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Whether a line at `level` would be written now (the invocation's level, which a sampled invocation lowers to
 * debug): a caller that would only build a line to have it dropped asks first, as Powertools works out the
 * line's trace id before it compares levels.
 */
export function logsAt(level: Level): boolean {
  return powertoolsLogger().level <= LogLevelThreshold[level.toUpperCase() as Uppercase<typeof level>];
}

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

/** `value` as a line's fields, read once and guarded; what is no object at all goes under `fields`. */
function safeFields(value: unknown): LogAttributes {
  const safe = jsonSafe(value);
  return safe !== null && typeof safe === 'object' && !Array.isArray(safe) ? (safe as LogAttributes) : { fields: safe as string };
}

/** An Error logged on its own goes under `err`; a Proxy that cannot even say whether it is one is taken as fields. */
function underErr(fields: object): object {
  try {
    return fields instanceof Error ? { err: fields } : fields;
  } catch {
    return fields;
  }
}

const safeMessage = (message: unknown): string => (typeof message === 'string' ? message : String(jsonSafe(message) ?? ''));

function serviceLogger(bindings: Record<string, unknown>): Logger {
  const at =
    (level: Level): LogFn =>
    (fields: object | string, message?: string) => {
      try {
        if (typeof fields === 'string') powertoolsLogger()[level](fields, bindings);
        else powertoolsLogger()[level](message ?? '', bindings, fields instanceof Error ? { err: fields } : (fields as LogAttributes));
      } catch {
        // Powertools reads the fields before the replacer does (a getter, a Proxy's traps): the line is made again from a guarded copy.
        try {
          if (typeof fields === 'string') powertoolsLogger()[level](fields, safeFields(bindings));
          else powertoolsLogger()[level](safeMessage(message), safeFields(bindings), safeFields(underErr(fields)));
        } catch {
          // Nothing left to write the line with; the call it describes goes on.
        }
      }
    };
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: (more) => {
      try {
        return serviceLogger({ ...bindings, ...more });
      } catch {
        return serviceLogger({ ...bindings, ...safeFields(more) });
      }
    },
  };
}

const rootLogger = serviceLogger({});

/** The service's logger: JSON lines on stdout, from Powertools Logger. */
export function logger(): Logger {
  return rootLogger;
}
