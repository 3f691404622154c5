import { relative } from 'node:path';
import pretty from 'pino-pretty';
import { indexerSchema } from '@hatchery/core/indexer/names';
import { logger, useLogDestination } from '@hatchery/platform/telemetry/logger';
import { demoSizes } from './demo-data';
import { followLauncher } from './launcher';
import { StartupError } from './record';
import { localSettings, type LocalSettings } from './settings';
import { startStack, type RunningStack } from './stack';

/** What a user needs next, short enough to read at a glance; the logs carry the rest. */
/** The demo data goes only where Hatchery made the database, or where it is asked for (HATCHERY_DEMO_DATA=true). */
const writesDemoData = (settings: LocalSettings, databaseUrl: string | undefined) =>
  settings.HATCHERY_DEMO_DATA === 'true' || (settings.HATCHERY_DEMO_DATA === 'auto' && !databaseUrl);

function banner(stack: RunningStack, settings: LocalSettings, seconds: number, demoData: boolean): string {
  const dataDir = relative(process.cwd(), settings.HATCHERY_DATA_DIR) || '.';
  const withDataDir = process.env.HATCHERY_DATA_DIR ? `HATCHERY_DATA_DIR=${process.env.HATCHERY_DATA_DIR} ` : '';
  return [
    '',
    `Hatchery is running at ${stack.url}  (ready in ${seconds.toFixed(1)} s)`,
    '',
    `  API        ${stack.url}`,
    `  Docs       ${stack.url}/docs`,
    `  Hub        ${stack.url.replace(/^http/, 'ws')}/hubs/events`,
    `  Data dir   ${dataDir.startsWith('..') ? settings.HATCHERY_DATA_DIR : dataDir}`,
    `  Database   ${stack.postgres?.tcpUrl ?? stack.databaseUrl}`,
    `  Indexer    schema ${indexerSchema()}, ${demoData ? 'demo data when it is empty' : 'read only (HATCHERY_DEMO_DATA=true fills an empty one with demo data)'}`,
    '',
    '  Next, in another terminal:',
    `    ${withDataDir}npm run token -- --uid alice --email alice@example.com --name Alice`,
    `    ${withDataDir}npm run simulate`,
    '',
    '  Ctrl-C stops everything.',
    '',
  ].join('\n');
}

function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof StartupError)) logger().debug({ err: error }, 'start-up failed');
  process.stderr.write(`Hatchery did not start: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const settings = localSettings();
  const format = settings.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format === 'pretty') useLogDestination(pretty({ colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service' }));

  // Stop requests that arrive while the stack starts are kept and honoured once it has (nothing half-started is left).
  let stopRequested: string | undefined;
  let stack: RunningStack | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (reason: string) => {
    stopRequested ??= reason;
    if (!stack || stopping) return;
    logger().info({ reason }, 'stopping');
    const running = stack;
    stopping = running.stop().then(() => process.exit(0), fail);
  };
  // SIGHUP: the terminal went away. The stack runs in the foreground of its terminal, so it goes with it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  // npm may go without passing a signal on (a SIGKILL): the stack goes with it.
  followLauncher(() => stop('parent process exited'));

  const started = performance.now();
  const databaseUrl = process.env.DATABASE_URL || undefined;
  stack = await startStack({
    port: settings.PORT,
    dataDir: settings.HATCHERY_DATA_DIR,
    persistent: true,
    databaseUrl,
    dynamoEndpoint: process.env.DYNAMODB_ENDPOINT || undefined,
    demoData: writesDemoData(settings, databaseUrl) ? demoSizes.demo : false,
  });
  if (stopRequested) return stop(stopRequested);
  const seconds = (performance.now() - started) / 1000;
  // The banner is for people; JSON logs get the same facts as one line for machines.
  if (format === 'json') {
    logger().info({ url: stack.url, docs: `${stack.url}/docs`, dataDir: settings.HATCHERY_DATA_DIR, readyInSeconds: Number(seconds.toFixed(2)) }, 'Hatchery is running');
  }
  process.stdout.write(`${banner(stack, settings, seconds, writesDemoData(settings, databaseUrl))}\n`);
}

main().catch(fail);
