/**
 * The releases of the service's schema, taken from git history, and each
 * one's own local stack (test/stack/accounts/upgrade.test.ts): a release is the
 * last commit before the one that added the next migration, and the newest is
 * today's working tree. An old release runs its own code from that commit,
 * with today's installed third-party packages (its tree has no
 * node_modules of its own) but its own @hatchery/* workspace packages.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repositoryRoot } from '../../deploy/sst/platform';

const migrationsPath = 'packages/core/src/migrations';

export interface Release {
  /** The commit, or undefined for today's working tree. */
  commit?: string;
  /** Its migrations, oldest first; the last names the release. */
  migrations: string[];
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: repositoryRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

const sqlFiles = (names: string[]) => names.filter((name) => name.endsWith('.sql')).sort();

/**
 * Every release from the first migration's to today's. Throws, saying why,
 * when history cannot answer: the upgrade check must not pass for want of the
 * releases it checks.
 */
export function releasesFromHistory(migrations: string[]): Release[] {
  let shallow: string;
  try {
    shallow = git('rev-parse', '--is-shallow-repository');
  } catch (error) {
    throw new Error(
      `the upgrade test takes each earlier release from git history, and ${repositoryRoot} has none (${(error as Error).message.trim()}); run it in a git clone of the repository`,
    );
  }
  if (shallow !== 'false')
    throw new Error(
      `the upgrade test takes each earlier release from git history, and this clone is shallow; fetch the whole history (git fetch --unshallow) or clone without --depth`,
    );
  const commits = new Set<string>();
  for (const next of migrations.slice(1)) {
    // The oldest commit that added it, should it have been removed and added again.
    const added = git('log', '--diff-filter=A', '--format=%H', '--', `${migrationsPath}/${next}`).split('\n').filter(Boolean).at(-1);
    // Not committed yet: the release before it is the last commit.
    commits.add(added ? git('rev-parse', `${added}^`) : git('rev-parse', 'HEAD'));
  }
  const releases: Release[] = [];
  for (const commit of commits) {
    const held = sqlFiles(git('ls-tree', '--name-only', `${commit}:${migrationsPath}`).split('\n'));
    // A release whose migrations are not a start of today's was renamed or removed since: a change this check must not hide.
    if (held.some((name, index) => migrations[index] !== name))
      throw new Error(`release ${commit} holds the migrations ${held.join(', ')}, which are not the first of today's (${migrations.join(', ')})`);
    if (held.length > 0 && held.length < migrations.length) releases.push({ commit, migrations: held });
  }
  // Two migrations added in one commit leave no release between them; several commits may name the same release.
  const distinct = [...new Map(releases.map((release) => [release.migrations.length, release])).values()];
  distinct.sort((a, b) => a.migrations.length - b.migrations.length);
  return [...distinct, { migrations }];
}

/** The release's name: its newest migration. */
export const releaseName = (release: Release) => release.migrations.at(-1)!;

/**
 * Dependencies an earlier release declares that today's install no longer
 * has, and what stands in for them in its tree. Each stand-in exports what the
 * release imports and throws if it is ever called, so the release behaves as
 * its own code would locally or fails loudly; a dependency missing and not
 * named here stops the test, naming it.
 */
const standIns: Record<string, { reason: string; modules: Record<string, string> }> = {
  '@aws-lambda-powertools/tracer': {
    // Releases before 4119523 import captureLambdaHandler statically (packages/functions/src/middleware/tracing.ts) but call it,
    // and construct a Tracer, only when AWS_LAMBDA_FUNCTION_NAME is set (packages/core/src/tracing.ts): never in the local stack.
    reason: 'X-Ray tracing runs only in Lambda, and today’s install has no @aws-lambda-powertools/tracer (removed in 4119523)',
    modules: {
      '.': 'export class Tracer { constructor() { throw new Error(REASON); } }',
      './middleware': 'export function captureLambdaHandler() { throw new Error(REASON); }',
    },
  },
};

function writeStandIn(modules: string, name: string): void {
  const { reason, modules: entries } = standIns[name]!;
  const dir = join(modules, name);
  // The scope's folder is a link into today's node_modules, which must not change: it becomes a folder of links.
  const scope = name.startsWith('@') ? join(modules, name.split('/')[0]!) : undefined;
  if (scope && lstatSync(scope, { throwIfNoEntry: false })?.isSymbolicLink()) {
    const target = realpathSync(scope);
    rmSync(scope);
    mkdirSync(scope);
    for (const entry of readdirSync(target)) symlinkSync(join(target, entry), join(scope, entry));
  }
  mkdirSync(dir, { recursive: true });
  const exports: Record<string, string> = {};
  for (const [path, source] of Object.entries(entries)) {
    const file = `${path === '.' ? 'index' : path.slice(2)}.js`;
    writeFileSync(join(dir, file), `const REASON = ${JSON.stringify(`stand-in for ${name}: ${reason}`)};\n${source}\n`);
    exports[path] = `./${file}`;
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', exports }));
}

/**
 * The release's tree in `dir`: the workspace packages and the root's
 * package.json (ESM) and tsconfig.json (tsx reads it), with a node_modules
 * whose third-party entries are today's and whose @hatchery/* are its own.
 */
export function materialize(commit: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const archive = execFileSync('git', ['archive', '--format=tar', commit, '--', 'package.json', 'tsconfig.json', 'packages'], {
    cwd: repositoryRoot,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  const installed = join(repositoryRoot, 'node_modules');
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@hatchery'), { recursive: true });
  for (const entry of readdirSync(installed)) if (entry !== '@hatchery' && !entry.startsWith('.')) symlinkSync(join(installed, entry), join(modules, entry));
  const missing = new Set<string>();
  for (const folder of readdirSync(join(dir, 'packages'))) {
    const manifest = JSON.parse(readFileSync(join(dir, 'packages', folder, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };
    if (manifest.name.startsWith('@hatchery/')) symlinkSync(join('..', '..', 'packages', folder), join(modules, manifest.name));
    for (const dependency of Object.keys(manifest.dependencies ?? {}))
      if (!dependency.startsWith('@hatchery/') && !existsSync(join(installed, dependency))) missing.add(dependency);
  }
  for (const name of missing) {
    if (!standIns[name])
      throw new Error(
        `release ${commit} depends on ${name}, which today's node_modules does not have: it cannot run on today's install; name a stand-in in test/stack/accounts/releases.ts, saying why it is safe, or run that release on its own install`,
      );
    writeStandIn(modules, name);
  }
}

export interface ReleaseStack {
  url: string;
  /** A token from that release's own identity provider. */
  idp: { signToken(claims: { uid: string; email?: string; name?: string }): Promise<string> };
  stop(): Promise<void>;
}

/** Starts the release's own stack (release-stack.ts) in a child process, in its materialized tree. */
export async function startReleaseStack(tree: string, options: { dataDir: string; databaseUrl: string; dynamoEndpoint: string }): Promise<ReleaseStack> {
  const script = join(tree, 'release-stack.ts');
  copyFileSync(fileURLToPath(new URL('./release-stack.ts', import.meta.url)), script);
  const child: ChildProcess = fork(script, [JSON.stringify(options)], {
    cwd: tree,
    // tsx from the tree's node_modules (today's), which the release's own tsconfig.json configures.
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, LOG_LEVEL: 'silent', IP_RATE_LIMIT_PER_SECOND: '0' },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const readLines = (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const line of stdout.split('\n').slice(0, -1)) {
        try {
          const parsed = JSON.parse(line) as { url?: unknown };
          if (typeof parsed.url !== 'string') continue;
          child.stdout!.off('data', readLines);
          resolve(parsed.url);
        } catch {
          // Not the ready line.
        }
      }
    };
    child.stdout!.on('data', readLines);
    void exited.then((code) => reject(new Error(`the stack of ${tree} exited (code ${code}) before it was ready:\n${stderr || stdout}`)));
  });

  let next = 0;
  const pending = new Map<number, { resolve(token: string): void; reject(error: Error): void }>();
  child.on('message', (reply: { id: number; token?: string; error?: string }) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.token !== undefined) waiting?.resolve(reply.token);
    else waiting?.reject(new Error(reply.error));
  });
  // A stack that dies while the test waits for a token fails the test instead of leaving it to its timeout.
  void exited.then((code) => {
    for (const waiting of pending.values()) waiting.reject(new Error(`the stack of ${tree} exited (code ${code}):\n${stderr}`));
    pending.clear();
  });
  return {
    url,
    idp: {
      signToken: (claims) =>
        new Promise((resolve, reject) => {
          const id = ++next;
          pending.set(id, { resolve, reject });
          child.send({ id, claims }, (error) => {
            if (!error) return;
            pending.delete(id);
            reject(error);
          });
        }),
    },
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`the stack of ${tree} stopped with code ${code}:\n${stderr}`);
    },
  };
}
