import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import pretty from 'pino-pretty';
import { indexerSchema } from '@hatchery/core/indexer/names';
import { logger, useLogDestination } from '@hatchery/platform/telemetry/logger';
import { demoSizes } from './demo-data';
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

/** A process's parent, from /proc on Linux (undefined once the process is gone); elsewhere only this process's own. */
function parentOf(pid: number): number | undefined {
  if (pid === process.pid) return process.ppid;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: the command may hold spaces and parentheses, so read after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The processes that launched the stack, each with the parent it must keep: this one's, and under npm, its shell's. */
function launchers(): { pid: number; parent: number | undefined }[] {
  const chain: { pid: number; parent: number | undefined }[] = [{ pid: process.pid, parent: process.ppid }];
  if (process.env.npm_lifecycle_event) chain.push({ pid: process.ppid, parent: parentOf(process.ppid) });
  return chain.filter(({ parent }) => parent !== undefined && parent > 1);
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
  // npm and the shell above may exit without passing a signal on (a process manager's SIGTERM to npm alone, a SIGKILL to
  // either): the stack goes with them. npm runs a script through `sh -c`, whose shell outlives a killed npm, so under npm
  // the shell's parent is watched too.
  const watched = launchers();
  setInterval(() => watched.some(({ pid, parent }) => parentOf(pid) !== parent) && stop('parent process exited'), 500).unref();

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
