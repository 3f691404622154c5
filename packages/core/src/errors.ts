/**
 * The error kinds of the domain, and the one mapping from kind to HTTP status
 * and RFC 9457 problem details. Handlers throw these; the problem middleware
 * turns any of them (and anything else, as a generic 500) into a response.
 */
/** What `Retry-After` asks of a client while a dependency is unavailable. */
export const unavailableRetryAfterSeconds = 5;

export type FieldErrors = Record<string, string[]>;

export const errorKinds = {
  validation: { status: 422, title: 'Validation failed' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  notFound: { status: 404, title: 'Not found' },
  conflict: { status: 409, title: 'Conflict' },
  /** A read's minBlock the index has not reached: a 4xx, since the service is sound and only the data is behind. */
  notIndexedYet: { status: 409, title: 'Not indexed yet' },
  gone: { status: 410, title: 'Gone' },
  payloadTooLarge: { status: 413, title: 'Content too large' },
  unsupportedMediaType: { status: 415, title: 'Unsupported media type' },
  rateLimited: { status: 429, title: 'Too many requests' },
  unavailable: { status: 503, title: 'Service unavailable' },
  internal: { status: 500, title: 'Internal server error' },
} as const;

export type ErrorKind = keyof typeof errorKinds;

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly fields?: FieldErrors,
    readonly headers?: Record<string, string>,
    /** RFC 9457 extension members of the problem (what it is about, for a program to read). */
    readonly extensions?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const validationError = (field: string, message: string): AppError => new AppError('validation', `Invalid ${field}.`, { [field]: [message] });

export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errors?: FieldErrors;
}

interface ProblemResponse {
  status: number;
  headers: Record<string, string>;
  body: Problem;
}

const genericDetail = 'An unexpected error occurred.';
const fallbackDetails: Partial<Record<ErrorKind, string>> = {
  conflict: 'The request conflicts with existing data.',
  unavailable: 'The database is unavailable; try again shortly.',
};

/** Any unique-constraint violation (PostgreSQL 23505) is a conflict. */
export const isUniqueViolation = (error: unknown): boolean => (error as { code?: unknown } | undefined)?.code === '23505';

/** Maps any thrown value to the problem response a client may see: no stack, no SQL. */
export function toProblem(error: unknown, instance: string): ProblemResponse {
  const appError = error instanceof AppError ? error : undefined;
  const kind: ErrorKind = appError?.kind ?? (isUniqueViolation(error) ? 'conflict' : isDatabaseUnavailable(error) ? 'unavailable' : 'internal');
  const { status, title } = errorKinds[kind];
  const detail = appError?.message ?? fallbackDetails[kind] ?? genericDetail;
  const body: Problem = { ...appError?.extensions, title, status, detail, instance };
  if (appError?.fields) body.errors = appError.fields;
  // A problem is true of one moment (the database down, a limit reached), so no cache, the edge's included, may keep it.
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...appError?.headers };
  if (kind === 'unauthorized') headers['www-authenticate'] ??= 'Bearer';
  if (kind === 'unavailable') headers['retry-after'] ??= String(unavailableRetryAfterSeconds);
  return { status, headers, body };
}

/** 57014 is PostgreSQL cancelling a statement at the pool's statement timeout: the database cannot answer in time. */
const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '57014', '53300']);

/** True for failures that mean "the database cannot be reached now", as opposed to a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && (unavailableCodes.has(code) || code.startsWith('08'))) return true;
  // A server on a Unix socket that is down has no socket file to connect to.
  if (code === 'ENOENT' && syscall === 'connect') return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect|Query read timeout/i.test(
    error.message,
  );
}
