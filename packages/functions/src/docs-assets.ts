import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The API explorer is Swagger UI, served from the swagger-ui-dist package's
 * own files (no CDN: it works with no internet). Locally they are read from
 * node_modules; a deployed function finds them beside its bundle, in
 * `docsAssetsBundleDir`, where the route's copyFiles put them.
 */
const docsAssetTypes = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;

type DocsAsset = keyof typeof docsAssetTypes;

const docsAssetsBundleDir = 'swagger-ui';

/** What the deploy copies beside the docs function's bundle (SST copyFiles, paths from the repository root). */
export const docsAssetCopyFiles = Object.keys(docsAssetTypes).map((file) => ({
  from: `node_modules/swagger-ui-dist/${file}`,
  to: `${docsAssetsBundleDir}/${file}`,
}));

export const isDocsAsset = (name: string): name is DocsAsset => Object.hasOwn(docsAssetTypes, name);

/**
 * Node's CommonJS fs, read synchronously, as platform's stdout.ts takes it: the
 * ESM namespace of node:fs or node:fs/promises would load fs/promises,
 * readline and os at the function's cold start, for a read of one file per
 * asset and instance.
 */
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');

function readOrUndefined(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function assetDir(): string | undefined {
  const beside = process.env.LAMBDA_TASK_ROOT && join(process.env.LAMBDA_TASK_ROOT, docsAssetsBundleDir);
  if (beside && existsSync(beside)) return beside;
  try {
    return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  } catch {
    return undefined;
  }
}

interface LoadedAsset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

const loaded = new Map<DocsAsset, LoadedAsset>();

/** The file and its gzip form, read once per process; undefined when this deployment does not have it. */
export async function loadDocsAsset(name: DocsAsset): Promise<LoadedAsset | undefined> {
  const cached = loaded.get(name);
  if (cached) return cached;
  const dir = assetDir();
  if (!dir) return undefined;
  const body = readOrUndefined(join(dir, name));
  if (!body) return undefined;
  const asset = { type: docsAssetTypes[name], body, gzip: gzipSync(body) };
  loaded.set(name, asset);
  return asset;
}
