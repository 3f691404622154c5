import { pino, type Logger } from 'pino';

let root: Logger | undefined;

/** One JSON logger per process; level from LOG_LEVEL (read directly so logging never depends on a valid config). */
export function logger(): Logger {
  root ??= pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'hatchery' } });
  return root;
}

export type { Logger };
