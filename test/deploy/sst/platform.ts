/**
 * Makes `.sst/platform` (SST's component sources, `config.d.ts` and their npm
 * dependencies) with the real `sst install` of the pinned CLI, once per SST
 * version. The CLI first checks for its Pulumi CLI and downloads it from
 * GitHub when missing; where that download cannot happen (CI, offline
 * machines), a stand-in that only answers `pulumi version` is placed in a
 * temporary config dir (XDG_CONFIG_HOME), never in the user's own.
 *
 * Run as a script (`npm run sst:platform`) or import `ensurePlatform()`.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

export const repositoryRoot = new URL('../../../', import.meta.url).pathname;
export const platformDir = join(repositoryRoot, '.sst', 'platform');

const require = createRequire(import.meta.url);

/** The CLI's version, pinned exactly in the root package.json. */
export function sstVersion(): string {
  const manifest = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  return manifest.devDependencies.sst!;
}

/** The platform binary of the CLI, from the per-platform package npm installed beside `sst`. */
function sstBinary(): string {
  return require.resolve(`sst-${process.platform}-${process.arch}/bin/sst${process.platform === 'win32' ? '.exe' : ''}`);
}

/**
 * The Pulumi CLI version the SST binary requires: the Go module version of the
 * Pulumi SDK it was built with (SST compares `pulumi version` to exactly
 * that), read from the binary's embedded build information.
 */
export function requiredPulumiVersion(binary = sstBinary()): string {
  const match = /dep\tgithub\.com\/pulumi\/pulumi\/sdk\/v3\t(v3\.\d+\.\d+)\t/.exec(readFileSync(binary).toString('latin1'));
  if (!match) throw new Error(`cannot read the Pulumi SDK version from ${binary}`);
  return match[1]!;
}

/** What the config's app() answers for a stage, evaluated as the CLI does before anything else (it becomes `$app`). */
export async function appConfig(stage: string): Promise<{ name: string; providers?: Record<string, unknown> } & Record<string, unknown>> {
  mkdirSync(platformDir, { recursive: true });
  const outfile = join(platformDir, `sst.app.${process.pid}.${Date.now()}.mjs`);
  await build({
    stdin: { contents: `import config from "./sst.config.ts"; export default config;`, resolveDir: repositoryRoot, sourcefile: 'app.ts', loader: 'ts' },
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    define: { $config: 'globalThis.__sstConfig' },
    logLevel: 'silent',
  });
  (globalThis as Record<string, unknown>).__sstConfig = (config: unknown) => config;
  try {
    const { default: config } = (await import(pathToFileURL(outfile).href)) as {
      default: { app(input: { stage: string }): Promise<Record<string, unknown>> | Record<string, unknown> };
    };
    return { removal: 'retain', protect: false, providers: {}, ...(await config.app({ stage })), stage } as unknown as Awaited<ReturnType<typeof appConfig>>;
  } finally {
    rmSync(outfile, { force: true });
  }
}

/** The installed platform, when it is the pinned CLI's and holds every provider the app names. */
async function isCurrent(version: string): Promise<boolean> {
  const versionFile = join(platformDir, 'version');
  const lockFile = join(repositoryRoot, '.sst', 'provider-lock.json');
  if (!existsSync(versionFile) || !existsSync(lockFile) || readFileSync(versionFile, 'utf8').trim() !== version) return false;
  const locked = new Set((JSON.parse(readFileSync(lockFile, 'utf8')) as { name: string }[]).map((entry) => entry.name));
  const wanted = Object.keys((await appConfig('platform')).providers ?? {});
  return wanted.every((name) => locked.has(name)) && existsSync(join(platformDir, 'node_modules', '@pulumi', 'pulumi'));
}

/** The user's own SST config dir holds a real Pulumi CLI of the right version (a laptop that has deployed before). */
function hasRealPulumi(version: string): boolean {
  const configHome = process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config');
  const pulumi = join(configHome, 'sst', 'bin', 'pulumi');
  if (!existsSync(pulumi)) return false;
  try {
    return execFileSync(pulumi, ['version'], { encoding: 'utf8' }).trim() === version;
  } catch {
    return false;
  }
}

export async function ensurePlatform(log: (line: string) => void = () => {}): Promise<string> {
  const version = sstVersion();
  if (await isCurrent(version)) return platformDir;
  const pulumiVersion = requiredPulumiVersion();
  const env: NodeJS.ProcessEnv = { ...process.env, SST_NO_BUN: '1', SST_TELEMETRY_DISABLED: '1', SST_STAGE: process.env.SST_STAGE ?? 'platform' };
  let standIn: string | undefined;
  if (!hasRealPulumi(pulumiVersion)) {
    standIn = mkdtempSync(join(tmpdir(), 'hatchery-sst-config-'));
    const bin = join(standIn, 'sst', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'pulumi'), `#!/bin/sh\necho ${pulumiVersion}\n`);
    chmodSync(join(bin, 'pulumi'), 0o755);
    env.XDG_CONFIG_HOME = standIn;
  }
  log(`sst install (SST ${version}${standIn ? `, a stand-in for Pulumi ${pulumiVersion}` : ''}) …`);
  try {
    execFileSync(sstBinary(), ['install'], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`sst install failed:\n${String(output.stdout ?? '')}${String(output.stderr ?? '')}`);
  } finally {
    if (standIn) rmSync(standIn, { recursive: true, force: true });
  }
  // config.d.ts imports the app's generated link types, which only `sst deploy`/`sst dev` write.
  const generated = join(repositoryRoot, '.sst', 'types.generated.ts');
  if (!existsSync(generated)) writeFileSync(generated, 'export {};\n');
  if (!(await isCurrent(version))) throw new Error(`sst install did not produce ${platformDir} for SST ${version} with the app's providers`);
  return platformDir;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const started = Date.now();
  await ensurePlatform((line) => console.log(line));
  console.log(`.sst/platform ready (SST ${sstVersion()}, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
