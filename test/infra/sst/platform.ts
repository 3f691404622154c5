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

function installedVersion(): string | undefined {
  const file = join(platformDir, 'version');
  return existsSync(file) && existsSync(join(platformDir, 'node_modules', '@pulumi', 'aws')) ? readFileSync(file, 'utf8').trim() : undefined;
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

export function ensurePlatform(log: (line: string) => void = () => {}): string {
  const version = sstVersion();
  if (installedVersion() === version) return platformDir;
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
  if (installedVersion() !== version) throw new Error(`sst install did not produce ${platformDir} for SST ${version}`);
  return platformDir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  ensurePlatform((line) => console.log(line));
  console.log(`.sst/platform ready (SST ${sstVersion()}, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
