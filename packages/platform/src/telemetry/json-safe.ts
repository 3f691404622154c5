/**
 * Telemetry must never fail the work it describes, nor be lost for one bad
 * value: what a log call or a trace is handed may be anything a handler holds
 * (a getter that throws, a Proxy, a revoked one, a BigInt, a cycle, a 1 MB
 * string), and a log line or a trace document must still leave, as valid
 * JSON, within its channel's size.
 */

const maxDepth = 32;

/** What a value that could not be read is written as, with its reader's error when that can be told. */
function unreadable(error: unknown): string {
  try {
    return `[unreadable: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}]`;
  } catch {
    return '[unreadable]';
  }
}

function read(object: object, key: string | number): unknown {
  try {
    return (object as Record<string | number, unknown>)[key];
  } catch (error) {
    return unreadable(error);
  }
}

/** An error as the logger writes one: its name, message, stack and cause, then its own fields (a `code`). */
function errorFields(error: Error, ancestors: object[], depth: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of ['name', 'message', 'stack', 'cause', ...Object.keys(error)]) {
    if (key in fields) continue;
    const value = jsonSafe(read(error, key), ancestors, depth + 1);
    if (value !== undefined) fields[key] = value;
  }
  return fields;
}

/**
 * A copy of `value` made of plain JSON values only, which JSON.stringify
 * writes without calling back into anything: each read that throws (a getter,
 * a toJSON, a Proxy's trap) is written as `[unreadable: …]` in its place, a
 * BigInt as its digits, a reference back to an enclosing object as
 * `[circular]`, and what JSON leaves out (functions, symbols, undefined) is
 * left out. Only for values that failed the fast path: it walks everything.
 */
export function jsonSafe(value: unknown, ancestors: object[] = [], depth = 0): unknown {
  try {
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return value;
      case 'number':
        return Number.isFinite(value) ? value : String(value);
      case 'bigint':
        return value.toString();
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
    }
    if (value === null) return null;
    const object = value as object;
    if (ancestors.includes(object)) return '[circular]';
    if (depth >= maxDepth) return '[nested too deep]';
    ancestors.push(object);
    try {
      if (object instanceof Error) return errorFields(object, ancestors, depth);
      const toJSON = read(object, 'toJSON');
      if (typeof toJSON === 'function') return jsonSafe(toJSON.call(object), ancestors, depth + 1);
      if (Array.isArray(object)) return Array.from({ length: object.length }, (_, i) => jsonSafe(read(object, i), ancestors, depth + 1) ?? null);
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(object)) {
        const entry = jsonSafe(read(object, key), ancestors, depth + 1);
        if (entry !== undefined) copy[key] = entry;
      }
      return copy;
    } finally {
      ancestors.pop();
    }
  } catch (error) {
    return unreadable(error);
  }
}

/**
 * `value` (plain JSON data) with each string longer than `maxChars` cut to
 * that many, saying how long it was, and each array or object past
 * `maxEntries` cut to that many, saying how many more it had.
 */
export function shortened(value: unknown, maxChars: number, maxEntries = Number.POSITIVE_INFINITY): unknown {
  if (typeof value === 'string') return value.length > maxChars ? `${value.slice(0, maxChars)}… (cut from ${value.length} characters)` : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const kept = value.slice(0, maxEntries).map((item) => shortened(item, maxChars, maxEntries));
    return value.length > maxEntries ? [...kept, `… (${value.length - maxEntries} more)`] : kept;
  }
  const entries = Object.entries(value);
  const kept = Object.fromEntries(entries.slice(0, maxEntries).map(([key, item]) => [key, shortened(item, maxChars, maxEntries)]));
  if (entries.length > maxEntries) kept['…'] = `${entries.length - maxEntries} more`;
  return kept;
}

/** Whether `text` takes more than `limit` bytes in UTF-8; its bytes are counted only when its length says it could. */
export function exceeds(text: string, limit: number): boolean {
  return text.length * 3 > limit && Buffer.byteLength(text) > limit;
}
