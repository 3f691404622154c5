import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack } from '@hatchery/local/stack';

/**
 * The local stack as `npm start` runs it on a database it is given (its own
 * DynamoDB, its own listener, standing by while the bench's leads), in a
 * process of its own: the throughput section's Hatchery side, so that the
 * bench's own heap and work are not the server's, as they are not the minimal server's.
 */
process.once('message', async ({ databaseUrl }: { databaseUrl: string }) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'hatchery-serving-'));
  const stack = await startStack({ port: 0, dataDir, persistent: false, databaseUrl, demoData: false });
  // Once, whichever comes first: SIGTERM from the bench, or the bench gone.
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
      process.exit(0);
    })());
  process.once('disconnect', stop);
  process.once('SIGTERM', stop);
  process.send?.({ url: stack.url });
});
