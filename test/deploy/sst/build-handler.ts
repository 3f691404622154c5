import { createCipheriv, createDecipheriv } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { build } from 'esbuild';

/** What sst.aws.Function sends the CLI's `Runtime.Build` (pkg/runtime/runtime.go BuildInput). */
export interface BuildInput {
  functionID: string;
  handler: string;
  runtime: string;
  encryptionKey?: string;
  links?: Record<string, unknown>;
  copyFiles?: { from: string; to: string; isDir?: boolean }[];
  properties?: { format?: 'esm' | 'cjs'; minify?: boolean; sourcemap?: boolean; banner?: string; architecture?: string; esbuild?: { external?: string[] } };
}

export interface BuildOutput {
  handler: string;
  out: string;
  errors: string[];
  sourcemaps: string[];
}

/** SST's node runtime tries these, in order, for a handler's file (pkg/runtime/node). */
const nodeExtensions = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
/** Never bundled (pkg/runtime/node/build.go forceExternal). */
const forceExternal = ['sharp', 'pg-native'];

/**
 * The CLI's `Runtime.Build` for Node.js functions, done as pkg/runtime/node
 * does it: find the handler's file, bundle it with esbuild (ESM, the CLI's
 * banner, minified when asked) and seal the links into
 * `resource.enc` (AES-256-GCM, zero nonce) for the `sst` SDK to open.
 */
export async function buildHandler(root: string, artifacts: string, input: BuildInput): Promise<BuildOutput> {
  const out = join(artifacts, `${input.functionID}-src`);
  const dot = basename(input.handler).lastIndexOf('.');
  const base = join(dirname(input.handler), basename(input.handler).slice(0, dot));
  const file = nodeExtensions.map((ext) => join(root, base + ext)).find(existsSync);
  if (!file) return { handler: input.handler, out, errors: [`Handler not found: ${input.handler}`], sourcemaps: [] };
  const rel = relative(root, file);
  const path = join(dirname(rel), basename(rel, extname(rel)).replaceAll('.', '-'));
  const properties = input.properties ?? {};
  const esm = properties.format !== 'cjs';
  const result = await build({
    entryPoints: [file],
    outfile: join(out, path + (esm ? '.mjs' : '.cjs')),
    platform: 'node',
    bundle: true,
    keepNames: true,
    format: esm ? 'esm' : 'cjs',
    target: 'esnext',
    mainFields: esm ? ['module', 'main'] : ['main'],
    external: [...forceExternal, ...(properties.esbuild?.external ?? [])],
    minify: properties.minify ?? false,
    sourcemap: properties.sourcemap ? 'linked' : false,
    banner: esm
      ? {
          js: [
            `import { createRequire as topLevelCreateRequire } from 'module';`,
            `const require = topLevelCreateRequire(import.meta.url);`,
            `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
            `const __filename = topLevelFileUrlToPath(import.meta.url)`,
            `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
            properties.banner ?? '',
          ].join('\n'),
        }
      : undefined,
    logLevel: 'silent',
  }).catch((error: { errors?: { text: string }[] }) => ({ errors: error.errors ?? [{ text: String(error) }] }));
  if (result.errors.length > 0) return { handler: path + extname(input.handler), out, errors: result.errors.map((e) => e.text), sourcemaps: [] };
  if (input.encryptionKey) {
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(input.encryptionKey, 'base64'), Buffer.alloc(12));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(input.links ?? {})), cipher.final(), cipher.getAuthTag()]);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'resource.enc'), sealed);
  }
  return { handler: path + extname(input.handler), out, errors: [], sourcemaps: [] };
}

/** The links sealed in a `resource.enc` under `key` (base64): what `Resource` from `sst/resource` opens in a function. */
export function openSealedLinks(sealed: Buffer, key: string): Record<string, unknown> {
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64'), Buffer.alloc(12));
  decipher.setAuthTag(sealed.subarray(-16));
  return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(0, -16)), decipher.final()]).toString('utf8')) as Record<string, unknown>;
}
