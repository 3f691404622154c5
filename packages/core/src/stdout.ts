import { writeSync } from 'node:fs';

/**
 * Writes one line to standard output synchronously, as pino's destination
 * did: the line leaves before Lambda freezes the instance, and costs less than
 * Node's stream. A pipe whose reader is slow answers EAGAIN; the write is
 * then retried from where it stopped.
 */
export function writeLine(text: string): void {
  const length = Buffer.byteLength(text);
  let written = 0;
  let bytes: Buffer | undefined;
  while (written < length) {
    try {
      // The string itself first, which most lines leave in whole; its bytes only for the rest of a partial write.
      written += bytes ? writeSync(1, bytes, written) : writeSync(1, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    }
    if (written < length) bytes ??= Buffer.from(text);
  }
}
