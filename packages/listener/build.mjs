// Bundles the listener's entry point into one ESM file for the container (see Dockerfile).
// `node packages/listener/build.mjs [outfile]`; tests build the same bundle with `buildOptions`.
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

/** The Node that builds the bundle is the one that runs it: in the image, both are the base image's (infra/runtime.ts). */
const runningNode = `node${process.versions.node.split('.')[0]}`;

export const buildOptions = (outfile) => ({
  entryPoints: [fileURLToPath(new URL('./src/main.ts', import.meta.url))],
  outfile,
  bundle: true,
  platform: 'node',
  target: runningNode,
  format: 'esm',
  // The AWS SDK's ESM builds (dist-es) before its CommonJS ones, as SST bundles the functions.
  mainFields: ['module', 'main'],
  sourcemap: true,
  // pg's optional native binding is never used.
  external: ['pg-native'],
  // CommonJS dependencies (pg, the AWS SDK) call require() for Node's own modules.
  banner: { js: "import { createRequire as __hatcheryRequire } from 'node:module'; const require = __hatcheryRequire(import.meta.url);" },
  logLevel: 'warning',
});

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await esbuild.build(buildOptions(process.argv[2] ?? fileURLToPath(new URL('./dist/listener.mjs', import.meta.url))));
}
