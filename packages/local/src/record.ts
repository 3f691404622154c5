import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from '@hatchery/platform/schema';
import { isAlive, stopOrphanedPostgres } from './postgres';

/**
 * The record a running stack keeps in its data folder: it is the folder's
 * lock (one stack per folder) and how `npm run token` and `npm run simulate`
 * find the stack, its database and its identity provider.
 */
const stackRecordSchema = z.object({
  pid: z.int().check(z.positive()),
  state: z.enum(['starting', 'ready']),
  dataDir: z.string(),
  url: z.optional(z.string()),
  databaseUrl: z.optional(z.string()),
  dynamoEndpoint: z.optional(z.string()),
  idpProjectId: z.optional(z.string()),
  idpKeyFile: z.optional(z.string()),
});

type StackRecord = z.infer<typeof stackRecordSchema>;

const stackFile = (dataDir: string) => join(dataDir, 'stack.json');

/** A start-up failure the user can act on: start.ts prints its message alone, as one line. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

async function readRecord(dataDir: string): Promise<StackRecord | undefined> {
  try {
    return stackRecordSchema.parse(JSON.parse(await readFile(stackFile(dataDir), 'utf8')));
  } catch {
    return undefined;
  }
}

/** The record of the stack running on `dataDir`, or undefined when none is (a record left by a killed stack does not count). */
async function runningStack(dataDir: string): Promise<StackRecord | undefined> {
  const record = await readRecord(dataDir);
  return record && isAlive(record.pid) ? record : undefined;
}

/** The ready stack on `dataDir`, for the tools that work with it (npm run token, npm run simulate); a clear refusal when there is none. */
export async function findRunningStack(dataDir: string): Promise<StackRecord & { url: string }> {
  const record = await runningStack(dataDir);
  if (!record) {
    throw new StartupError(
      `no Hatchery is running with data dir ${dataDir}; start one with \`npm start\`, or set HATCHERY_DATA_DIR to the data dir of the one that runs`,
    );
  }
  if (record.state !== 'ready' || !record.url)
    throw new StartupError(`the Hatchery on data dir ${dataDir} (pid ${record.pid}) is still starting; try again in a moment`);
  return { ...record, url: record.url };
}

const describeStack = (record: StackRecord) =>
  `another Hatchery is running with data dir ${record.dataDir} (pid ${record.pid}${record.url ? `, ${record.url}` : ', still starting'}); ` +
  'stop it, or give another its own data dir and port: HATCHERY_DATA_DIR=.hatchery-b PORT=3001 npm start';

interface DataDirClaim {
  /** The pid of a PostgreSQL server a killed stack had left running on this data, now stopped. */
  orphanStopped: number | undefined;
  /** Rewrites the record (atomically: readers never see half of it). */
  update(fields: Partial<Omit<StackRecord, 'pid' | 'dataDir'>>): Promise<void>;
  release(): Promise<void>;
}

/**
 * Claims `dataDir` for this process: refuses when a live stack holds it,
 * takes over a record left by a stack that was killed, and stops any
 * PostgreSQL server such a stack left running on the data.
 */
export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  await mkdir(dataDir, { recursive: true });
  let record: StackRecord = { pid: process.pid, state: 'starting', dataDir };
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(stackFile(dataDir), 'wx');
      await file.writeFile(JSON.stringify(record));
      await file.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = await runningStack(dataDir);
      if (holder && holder.pid !== process.pid) throw new StartupError(describeStack(holder));
      await rm(stackFile(dataDir), { force: true });
    }
  }
  return {
    orphanStopped: await stopOrphanedPostgres(dataDir),
    update: async (fields) => {
      record = { ...record, ...fields };
      const temporary = `${stackFile(dataDir)}.${process.pid}`;
      await writeFile(temporary, JSON.stringify(record));
      await rename(temporary, stackFile(dataDir));
    },
    release: async () => {
      if ((await readRecord(dataDir))?.pid === process.pid) await rm(stackFile(dataDir), { force: true });
    },
  };
}
