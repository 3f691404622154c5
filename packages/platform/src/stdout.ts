/**
 * Taken as Node's CommonJS module, not `import`ed: an ESM import of node:fs
 * builds its namespace from every export, the lazy `promises` among them,
 * which loads fs/promises, readline and os (about 2 ms of a cold start) for
 * nothing a line needs. config.ts takes it the same way.
 */
const { writeSync } = process.getBuiltinModule('node:fs');

/** What a full pipe's writer sleeps before it tries again: long enough to give the core to the reader, short beside a request. */
const fullPipeWaitMs = 1;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes one line to standard output synchronously, as pino's destination
 * did: the line leaves before Lambda freezes the instance, and costs less than
 * Node's stream. A pipe whose reader is slow answers EAGAIN; the writer then
 * sleeps a moment, rather than spin on the core the reader needs, and goes on
 * from where it stopped.
 */
function write(text: string): void {
  const length = Buffer.byteLength(text);
  let written = 0;
  let bytes: Buffer | undefined;
  while (written < length) {
    try {
      // The string itself first, which most lines leave in whole; its bytes only for the rest of a partial write.
      written += bytes ? writeSync(1, bytes, written) : writeSync(1, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(sleeper, 0, 0, fullPipeWaitMs);
    }
    if (written < length) bytes ??= Buffer.from(text);
  }
}

let held: string | undefined;

/**
 * Keeps the lines written from now on until `releaseLines`, which writes them
 * with one system call: an HTTP request ends with its log line and its
 * metrics, and a write to Lambda's stdout pipe cost about 20 µs of a warm
 * call's CPU. Invocations that run concurrently may see their lines held a
 * moment longer; none is lost or reordered.
 */
export function holdLines(): void {
  held ??= '';
}

export function releaseLines(): void {
  const text = held;
  held = undefined;
  if (text) write(text);
}

/** Writes one line (ending in a newline) now, or with the held ones. */
export function writeLine(text: string): void {
  if (held !== undefined) held += text;
  else write(text);
}
