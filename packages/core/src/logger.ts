import { pino, type DestinationStream, type Logger } from 'pino';

let root: Logger | undefined;
let destination: DestinationStream | undefined;

/** One JSON logger per process; level from LOG_LEVEL (read directly so logging never depends on a valid config). */
export function logger(): Logger {
  const options = { level: process.env.LOG_LEVEL ?? 'info', base: { service: 'hatchery' } };
  root ??= destination ? pino(options, destination) : pino(options);
  return root;
}

/** Sends the logs elsewhere (the local stack's readable terminal output); call before the first log line. */
export function useLogDestination(stream: DestinationStream): void {
  destination = stream;
  root = undefined;
}

export type { Logger };
