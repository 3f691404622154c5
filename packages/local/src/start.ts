import { relative } from 'node:path';
import pg from 'pg';
import pretty from 'pino-pretty';
import { configSchema } from '@hatchery/platform/config';
import { indexerSchema } from '@hatchery/core/indexer/names';
import { logger, useLogDestination } from '@hatchery/platform/telemetry/logger';
import { demoSizes, indexerContents } from './demo-data';
import { followLauncher } from './launcher';
import { StartupError } from './record';
import { localSettings, localSettingsSchema, type LocalSettings } from './settings';
import { startStack, type RunningStack } from './stack';

/** The demo data goes only where Hatchery made the database, or where it is asked for (HATCHERY_DEMO_DATA=true). */
const writesDemoData = (settings: LocalSettings, databaseUrl: string | undefined) =>
  settings.HATCHERY_DEMO_DATA === 'true' || (settings.HATCHERY_DEMO_DATA === 'auto' && !databaseUrl);

/** Values the banner never prints: a secret, or a setting that holds one (the webhook endpoints' signing secrets). */
const secretSettings = new Set(['ORIGIN_VERIFY_SECRET', 'WEBHOOK_ENDPOINTS']);

/**
 * The settings of `env` whose value differs from the default, as NAME=value: what makes this stack unlike the one the
 * docs describe. Read before the stack sets its own variables (DATABASE_URL, DYNAMODB_ENDPOINT, …).
 */
function settingsOffDefault(env: NodeJS.ProcessEnv): string[] {
  const shapes: Record<string, { safeParse(value: unknown): { success: boolean; data?: unknown } }> = { ...localSettingsSchema.shape, ...configSchema.shape };
  return Object.entries(shapes).flatMap(([name, schema]) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return [];
    const fallback = schema.safeParse(undefined);
    const value = schema.safeParse(raw);
    if (fallback.success && value.success && JSON.stringify(fallback.data) === JSON.stringify(value.data)) return [];
    return [`${name}=${secretSettings.has(name) ? '(set)' : raw}`];
  });
}

/** What the indexer schema holds now, in words. */
async function describeIndexer(databaseUrl: string, demoData: boolean): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const contents = await indexerContents(client);
    if (!contents.present)
      return `schema ${indexerSchema()}: absent, until the indexer creates it${demoData ? '' : ' (HATCHERY_DEMO_DATA=true fills it with demo data)'}`;
    const counts = `${contents.editions.toLocaleString('en')} editions, ${contents.listings.toLocaleString('en')} listings`;
    return `schema ${indexerSchema()}: ${contents.demo ? `demo data (${counts})` : counts}`;
  } finally {
    await client.end();
  }
}

/** What a user needs next, short enough to read at a glance; the logs carry the rest. */
function banner(stack: RunningStack, settings: LocalSettings, seconds: number, indexer: string, offDefault: string[]): string {
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
    `  Indexer    ${indexer}`,
    `  Settings   ${offDefault.length ? offDefault.join(' ') : 'the defaults (docs/local-stack.md#configuration)'}`,
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
  // Powertools' line: its message and timestamp keys; what every line repeats (service, cold start, request and trace ids) left out of the terminal.
  if (format === 'pretty') {
    const ignore = 'service,cold_start,function_request_id,xray_trace_id';
    useLogDestination(pretty({ colorize: true, singleLine: true, messageKey: 'message', timestampKey: 'timestamp', translateTime: 'SYS:HH:MM:ss', ignore }));
  }

  // Stop requests that arrive while the stack starts are kept and honoured once it has (nothing half-started is left).
  let stopRequested: string | undefined;
  let stack: RunningStack | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (reason: string) => {
    if (!stack && !stopRequested) process.stderr.write(`Hatchery was interrupted (${reason}) while starting; stopping.\n`);
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

  const offDefault = settingsOffDefault(process.env);
  const started = performance.now();
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const demoData = writesDemoData(settings, databaseUrl);
  try {
    stack = await startStack({
      port: settings.PORT,
      dataDir: settings.HATCHERY_DATA_DIR,
      persistent: true,
      databaseUrl,
      dynamoEndpoint: process.env.DYNAMODB_ENDPOINT || undefined,
      managementEndpoint: process.env.WEBSOCKET_MANAGEMENT_ENDPOINT || undefined,
      demoData: demoData ? demoSizes.demo : false,
    });
  } catch (error) {
    // A start cut short fails in whatever step it was in; that is no failure to report, and nothing of it runs on.
    if (stopRequested) process.exit(0);
    throw error;
  }
  if (stopRequested) return stop(stopRequested);
  const seconds = (performance.now() - started) / 1000;
  const indexer = await describeIndexer(stack.databaseUrl, demoData).catch((error: Error) => `schema ${indexerSchema()}: not readable (${error.message})`);
  // The banner is for people; JSON logs get the same facts as one line for machines.
  if (format === 'json') {
    logger().info(
      {
        url: stack.url,
        docs: `${stack.url}/docs`,
        dataDir: settings.HATCHERY_DATA_DIR,
        readyInSeconds: Number(seconds.toFixed(2)),
        indexer,
        settings: offDefault,
      },
      'Hatchery is running',
    );
  }
  process.stdout.write(`${banner(stack, settings, seconds, indexer, offDefault)}\n`);
}

main().catch(fail);
