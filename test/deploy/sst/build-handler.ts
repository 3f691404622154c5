import { createCipheriv, createDecipheriv } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { type BuildOptions, build } from 'esbuild';

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
 * `bundles` is a directory of the bundles earlier deploys of the same test
 * run built (DeployRequest.bundles): one built from the same options is
 * copied rather than built again.
 */
export async function buildHandler(root: string, artifacts: string, input: BuildInput, bundles?: string): Promise<BuildOutput> {
  const out = join(artifacts, `${input.functionID}-src`);
  const dot = basename(input.handler).lastIndexOf('.');
  const base = join(dirname(input.handler), basename(input.handler).slice(0, dot));
  const file = nodeExtensions.map((ext) => join(root, base + ext)).find(existsSync);
  if (!file) return { handler: input.handler, out, errors: [`Handler not found: ${input.handler}`], sourcemaps: [] };
  const rel = relative(root, file);
  const path = join(dirname(rel), basename(rel, extname(rel)).replaceAll('.', '-'));
  const properties = input.properties ?? {};
  const esm = properties.format !== 'cjs';
  const options = {
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
  } satisfies BuildOptions;
  const result = await reusedOrBuilt(options, out, bundles).catch((error: { errors?: { text: string }[] }) => ({
    errors: error.errors ?? [{ text: String(error) }],
  }));
  if (result.errors.length > 0) return { handler: path + extname(input.handler), out, errors: result.errors.map((e) => e.text), sourcemaps: [] };
  if (input.encryptionKey) {
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(input.encryptionKey, 'base64'), Buffer.alloc(12));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(input.links ?? {})), cipher.final(), cipher.getAuthTag()]);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'resource.enc'), sealed);
  }
  return { handler: path + extname(input.handler), out, errors: [], sourcemaps: [] };
}

/**
 * The bundle of `options` in `out`: copied from `bundles` when a deploy of the same run built it from the same
 * options (the sources do not change within a run), else built and kept there. Keyed by every option but where the
 * bundle is written, which is the deploy's own directory.
 */
async function reusedOrBuilt(options: BuildOptions & { outfile: string }, out: string, bundles: string | undefined): Promise<{ errors: { text: string }[] }> {
  if (!bundles) return build(options);
  const key = createHash('sha256')
    .update(JSON.stringify({ ...options, outfile: relative(out, options.outfile) }))
    .digest('hex');
  const kept = join(bundles, key);
  if (existsSync(kept)) {
    cpSync(kept, out, { recursive: true });
    return { errors: [] };
  }
  const result = await build(options);
  if (result.errors.length === 0) {
    // Written aside and renamed, so a deploy running beside this one never copies half a bundle.
    const aside = join(bundles, `${key}.${randomUUID()}`);
    cpSync(out, aside, { recursive: true });
    try {
      renameSync(aside, kept);
    } catch {
      rmSync(aside, { recursive: true, force: true });
    }
  }
  return result;
}

/** The links sealed in a `resource.enc` under `key` (base64): what `Resource` from `sst/resource` opens in a function. */
export function openSealedLinks(sealed: Buffer, key: string): Record<string, unknown> {
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64'), Buffer.alloc(12));
  decipher.setAuthTag(sealed.subarray(-16));
  return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(0, -16)), decipher.final()]).toString('utf8')) as Record<string, unknown>;
}
