import { writeSync } from 'node:fs';

/**
 * Writes one line to standard output synchronously, as pino's destination
 * did: the line leaves before Lambda freezes the instance, and costs less than
 * Node's stream. A pipe whose reader is slow answers EAGAIN; the write is
 * then retried from where it stopped.
 */
export function writeLine(text: string): void {
  const bytes = Buffer.from(text);
  for (let written = 0; written < bytes.length; ) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    }
  }
}
