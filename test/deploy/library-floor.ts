import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { httpRoutes } from '@hatchery/functions/routes';
import { fanOutHandler, wsRoutes } from '@hatchery/functions/routes/realtime';
import { bundleOf, sstResolution, type Bundle } from '../support/bundles';
import { functionBuild, insideNodeModules } from './pg-only';
import { buildHandler } from './sst/build-handler';
import { repositoryRoot } from './sst/platform';

/**
 * A function's library floor: a bundle, built as SST builds the function, of
 * only the third-party libraries the function's own code imports, each
 * constructed at init as the function constructs it, and no Hatchery code.
 * Its import time is what the function would cost if Hatchery's own code
 * weighed nothing; the cold-start table gives each function's import as a
 * ratio to its floor's, measured in the same rounds.
 */

/** How each library the functions import is loaded and constructed at init, as the function does it. */
const constructions: Record<string, { imports: string; init: string }> = {
  pg: {
    imports: `import pg from 'pg';`,
    init: `const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 }); void pool;`,
  },
  zod: {
    imports: `import * as z from 'zod/mini';\nimport { en } from 'zod/locales';`,
    init: `z.config(en()); const pageQuery = z.object({ page: z._default(z.coerce.number().check(z.int(), z.gte(1)), 1), filter: z.optional(z.string()) }); void pageQuery.safeParse({});`,
  },
  '@middy/core': {
    imports: `import middy from '@middy/core';`,
    init: '',
  },
  '@aws-lambda-powertools/logger': {
    imports: `import { Logger } from '@aws-lambda-powertools/logger';\nimport { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';`,
    init: `const logger = new Logger({ serviceName: 'hatchery' }); middlewares.push(injectLambdaContext(logger));`,
  },
  '@aws-lambda-powertools/metrics': {
    imports: `import { Metrics } from '@aws-lambda-powertools/metrics';\nimport { logMetrics } from '@aws-lambda-powertools/metrics/middleware';`,
    init: `const metrics = new Metrics({ namespace: 'Hatchery', serviceName: 'hatchery' }); middlewares.push(logMetrics(metrics));`,
  },
  '@aws-sdk/client-dynamodb': {
    imports: `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';`,
    init: `const dynamodb = new DynamoDBClient({ region: process.env.AWS_REGION }); void dynamodb;`,
  },
  '@aws-sdk/lib-dynamodb': {
    imports: `import { DynamoDBClient as DocumentBase } from '@aws-sdk/client-dynamodb';\nimport { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';`,
    init: `const documents = DynamoDBDocumentClient.from(new DocumentBase({ region: process.env.AWS_REGION })); void documents; void GetCommand;`,
  },
  '@aws-sdk/client-apigatewaymanagementapi': {
    imports: `import { ApiGatewayManagementApiClient, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';`,
    init: `const management = new ApiGatewayManagementApiClient({ region: process.env.AWS_REGION, endpoint: 'https://hub.example.test/$default' }); void management; void PostToConnectionCommand;`,
  },
  '@smithy/node-http-handler': {
    imports: `import { NodeHttpHandler } from '@smithy/node-http-handler';`,
    init: `void new NodeHttpHandler({ connectionTimeout: 1000, requestTimeout: 1000 });`,
  },
  'aws-jwt-verify': {
    imports: `import { JwtVerifier } from 'aws-jwt-verify';\nimport { SimpleJwksCache } from 'aws-jwt-verify/jwk';`,
    init: `const verifier = JwtVerifier.create({ issuer: 'https://securetoken.google.com/p', audience: 'p', jwksUri: 'https://example.test/jwks' }, { jwksCache: new SimpleJwksCache() }); void verifier;`,
  },
  viem: {
    imports: `import { recoverMessageAddress } from 'viem';`,
    init: `void recoverMessageAddress;`,
  },
  // Opened at the first read of a setting, in the first call, as the function opens it; the import is the floor's part.
  sst: { imports: `import { Resource } from 'sst/resource';\nexport { Resource };`, init: '' },
  'swagger-ui-dist': { imports: '', init: '' },
  '@aws-lambda-powertools/commons': { imports: '', init: '' },
  '@aws-sdk/util-dynamodb': { imports: '', init: '' },
};

/** The SDK's own building blocks (a retry strategy, a type): any SDK client of the floor brings them, as it brings them to the function. */
const comesWithTheSdk = (name: string) => /^@(smithy|aws-sdk|aws-crypto)\//.test(name) && !(name in constructions);

/** The package a resolved module path belongs to, or undefined for first-party code. */
function packageOf(path: string): string | undefined {
  const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  return match?.[1];
}

/** esbuild's metafile of a handler's bundle, resolved as SST resolves it (ESM builds first), nothing written. */
export async function bundleMetafile(entry: string) {
  const { metafile } = await build({
    entryPoints: [join(repositoryRoot, entry)],
    absWorkingDir: repositoryRoot,
    ...sstResolution,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return metafile;
}

/** The first import chain from `entry` to a module `matches` accepts, in a bundle's metafile inputs, or undefined. */
function importChain(inputs: Record<string, { imports: { path: string }[] }>, entry: string, matches: (file: string) => boolean): string[] | undefined {
  const via = new Map<string, string | undefined>([[entry, undefined]]);
  for (const file of via.keys()) {
    if (matches(file)) {
      const chain = [file];
      for (let previous = via.get(file); previous; previous = via.get(previous)) chain.unshift(previous);
      return chain;
    }
    for (const { path } of inputs[file]?.imports ?? []) if (!via.has(path)) via.set(path, file);
  }
  return undefined;
}

/** Every deployed function's handler: each HTTP route's, the hub's and the fan-out function's. */
export const functionHandlers: readonly string[] = [
  ...Object.values(httpRoutes).map((route) => route.handler),
  ...wsRoutes.map((route) => route.handler),
  fanOutHandler,
];

const handlerSource = (handler: string) => `${handler.replace(/\.handler$/, '')}.ts`;

/**
 * One build of every function's handler, nothing written: a module's imports are what its own source names,
 * whichever entries share the build, so the chains from each handler are those of its own bundle, for one parse.
 */
let everyHandler: Promise<Metafile> | undefined;
const everyHandlerMetafile = () =>
  (everyHandler ??= build({
    entryPoints: functionHandlers.map((handler) => join(repositoryRoot, handlerSource(handler))),
    absWorkingDir: repositoryRoot,
    ...sstResolution,
    outdir: join(repositoryRoot, 'out'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  }).then(({ metafile }) => metafile));

/** The first import chain from a handler (`packages/…/file.handler`) to a module `matches` accepts, in its bundle as SST builds it, or undefined. */
export async function handlerImportChain(handler: string, matches: (file: string) => boolean): Promise<string[] | undefined> {
  const entry = handlerSource(handler);
  const { inputs } = functionHandlers.includes(handler) ? await everyHandlerMetafile() : await bundleMetafile(entry);
  return importChain(inputs, entry, matches);
}

/**
 * The third-party packages the function's own (first-party) modules import, found as esbuild resolves them, of
 * those the bundle carries: a module its tree shaking dropped (a graph's import the handler never runs) brings
 * nothing to the function, so it brings nothing to the floor either.
 */
export async function directLibraries(handlerSource: string): Promise<string[]> {
  const metafile = await bundleMetafile(`${handlerSource.replace(/\.[^./]+$/, '')}.ts`);
  const carried = new Set(
    Object.values(metafile.outputs).flatMap((output) =>
      Object.entries(output.inputs)
        .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
        .map(([file]) => file),
    ),
  );
  const carriedPackages = new Set([...carried].flatMap((file) => packageOf(file) ?? []));
  const libraries = new Set<string>();
  for (const [file, { imports }] of Object.entries(metafile.inputs)) {
    if (packageOf(file) || !carried.has(file)) continue;
    for (const { path } of imports) {
      const name = packageOf(path);
      if (name && carriedPackages.has(name)) libraries.add(name);
    }
  }
  return [...libraries].sort();
}

/** The floor's handler source for these libraries; a library without a construction is an error, so a new dependency is given one on purpose. */
export function floorSource(libraries: readonly string[]): string {
  const unknown = libraries.filter((name) => !(name in constructions) && !comesWithTheSdk(name));
  if (unknown.length) throw new Error(`no construction for ${unknown.join(', ')} in test/deploy/library-floor.ts`);
  const used = libraries.flatMap((name) => constructions[name] ?? []);
  const middy = libraries.includes('@middy/core');
  return [
    ...used.map((each) => each.imports).filter(Boolean),
    'const middlewares = [];',
    ...used.map((each) => each.init).filter(Boolean),
    middy
      ? 'export const handler = middy().use(middlewares).handler(async () => ({ statusCode: 200, body: "{}" }));'
      : 'export const handler = async () => ({ statusCode: 200, body: "{}" });',
    '',
  ].join('\n');
}

export interface LibraryFloor {
  libraries: string[];
  file: string;
  exportName: string;
  taskRoot: string;
  bundle: Bundle;
}

/** Builds the floor of `libraries` into `outdir` (its source is written inside node_modules so that esbuild resolves the packages, then removed). */
export async function buildLibraryFloor(libraries: readonly string[], outdir: string): Promise<LibraryFloor> {
  const id = `floor-${libraries.map((name) => name.replace(/[^a-z0-9]+/gi, '_')).join('-')}`.slice(0, 120);
  const source = insideNodeModules(`${id}-${process.pid}-${Date.now()}`);
  mkdirSync(source, { recursive: true });
  try {
    writeFileSync(join(source, 'floor.mjs'), floorSource(libraries));
    const built = await buildHandler(source, join(outdir, id), {
      functionID: 'Floor',
      handler: 'floor.handler',
      runtime: 'nodejs24.x',
      properties: functionBuild,
    });
    if (built.errors.length) throw new Error(`library floor (${libraries.join(', ')}): ${built.errors.join('; ')}`);
    const file = join(built.out, 'floor.mjs');
    return { libraries: [...libraries], file, exportName: 'handler', taskRoot: built.out, bundle: bundleOf(file) };
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
}

/** The floors of several functions, one build per distinct set of libraries. */
export async function libraryFloors(handlerSources: readonly string[], outdir: string): Promise<Map<string, LibraryFloor>> {
  const byKey = new Map<string, Promise<LibraryFloor>>();
  const floors = new Map<string, LibraryFloor>();
  for (const source of handlerSources) {
    const libraries = await directLibraries(source);
    const key = libraries.join(' ');
    if (!byKey.has(key)) byKey.set(key, buildLibraryFloor(libraries, outdir));
    floors.set(source, await byKey.get(key)!);
  }
  return floors;
}
