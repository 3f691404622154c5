import { parseArgs } from 'node:util';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { countDeadLetters, redeliverDeadLetters } from '@hatchery/core/webhooks/dead-letters';
import { jobSchema } from '@hatchery/core/webhooks/delivery';
import { findRunningStack, StartupError } from './record';
import { localSettings } from './settings';

const usage = `usage: npm run webhooks -- dead                        how many deliveries each endpoint has dead-lettered
       npm run webhooks -- redeliver --endpoint <name>  send an endpoint's dead-lettered deliveries again
The database is DATABASE_URL's when set (a deployed stage's), else the running npm start's.`;

/**
 * The webhooks' dead letters, for whoever operates a stage (docs/webhooks.md,
 * "Dead letters"): counted, and sent again once the receiver is mended.
 */
async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { endpoint: { type: 'string' } } });
  const [command] = positionals;
  if ((command !== 'dead' && command !== 'redeliver') || positionals.length !== 1 || (command === 'redeliver' && !values.endpoint))
    throw new StartupError(usage);
  const databaseUrl = process.env.DATABASE_URL || (await findRunningStack(localSettings().HATCHERY_DATA_DIR)).databaseUrl;
  if (!databaseUrl) throw new StartupError('no database: set DATABASE_URL, or start npm start');
  const session = new pg.Client({ connectionString: databaseUrl });
  await session.connect();
  const boss = new PgBoss({ connectionString: databaseUrl, schema: jobSchema, max: 2, supervise: false, schedule: false });
  boss.on('error', (error) => process.stderr.write(`the job queue: ${error.message}\n`));
  await boss.start();
  try {
    if (command === 'dead') {
      const counts = await countDeadLetters(session, jobSchema);
      if (!Object.keys(counts).length) process.stdout.write('No dead-lettered deliveries.\n');
      for (const [endpoint, count] of Object.entries(counts)) process.stdout.write(`${endpoint}: ${count} dead-lettered\n`);
    } else {
      const moved = await redeliverDeadLetters(session, boss, values.endpoint!);
      process.stdout.write(
        `${values.endpoint}: ${moved} dead-lettered ${moved === 1 ? 'delivery' : 'deliveries'} queued again, each with a fresh retry window\n`,
      );
    }
  } finally {
    await boss.stop({ graceful: false });
    await session.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`npm run webhooks: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
