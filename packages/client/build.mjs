// The package's browser bundle: ESM, one file per entry point, @microsoft/signalr left to the app; and its declarations.
// `npm run build -w @hatchery/client` writes dist/; tests and the size check build the same in memory.
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const source = (file) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export const entryPoints = { index: source('index.ts'), events: source('events.ts') };

/** `platform: 'browser'` makes esbuild refuse a Node built-in anywhere in what browsers load. */
export const buildOptions = (options = {}) => ({
  entryPoints,
  outdir: fileURLToPath(new URL('./dist', import.meta.url)),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  external: ['@microsoft/signalr'],
  logLevel: 'warning',
  ...options,
});

/** Everything the package offers in one minified bundle, as an app that uses all of it ships it: gzip this for the size. */
export async function minifiedWhole() {
  const result = await esbuild.build({
    ...buildOptions(),
    entryPoints: undefined,
    splitting: false,
    outdir: undefined,
    stdin: { contents: `export * from './index.ts'; export * from './events.ts';`, resolveDir: source('.'), loader: 'ts' },
    minify: true,
    write: false,
  });
  return result.outputFiles[0].contents;
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const declarationConfig = fileURLToPath(new URL('./tsconfig.build.json', import.meta.url));

/** What the package ships, into `outdir`: the bundle, and tsc's declarations of src/ (which import nothing but each other and @microsoft/signalr). */
export async function build(outdir = buildOptions().outdir) {
  // Chunk names are content hashes: a stale one would ship beside the new.
  await rm(outdir, { recursive: true, force: true });
  await esbuild.build(buildOptions({ outdir }));
  execFileSync(process.execPath, [tsc, '-p', declarationConfig, '--outDir', outdir], { stdio: 'inherit' });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await build();
