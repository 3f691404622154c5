/**
 * `sst deploy`'s program, for real, without the Pulumi engine or AWS: the
 * config bundled as the SST CLI bundles it (pkg/project/stack.go, pkg/js),
 * run by SST's own `run()` shim against the real components of
 * `.sst/platform` under Pulumi's unit-test mocks. Every resource the
 * components register is recorded with its inputs, parent and `dependsOn`.
 *
 * One deploy per process (Pulumi's runtime is global): the test spawns
 * `tsx test/deploy/sst/deploy.ts <request.json> <result.json>`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { buildHandler, type BuildInput } from './build-handler';
import { fakeAccount, fakeRegion, mockCall, mockResource } from './mocks';
import { appConfig, platformDir, repositoryRoot } from './platform';

export interface DeployRequest {
  stage: string;
  /** Variables of the deploying shell: the platform team's settings and the stage's secrets (SST_SECRET_<Name>). */
  env: Record<string, string>;
  /** Another config to run instead of sst.config.ts, from the repository root (a fixture that changes the app on purpose). */
  config?: string;
  /** Where the deploys of one test run keep the function bundles they built, each reused by the next deploy that builds the same. */
  bundles?: string;
}

export interface RecordedResource {
  type: string;
  name: string;
  /** Pulumi's URN: what its state is keyed by, so a changed URN is a resource deleted and another created. */
  urn?: string;
  /** The physical id the mocks gave it. */
  id?: string;
  custom: boolean;
  inputs: Record<string, unknown>;
  /** The outputs the mocks gave it (inputs plus computed attributes). */
  state: Record<string, unknown>;
  parent?: string;
  /** Names of the resources it was declared to depend on. */
  dependsOn: string[];
  /** Kept in AWS when removed from the program (SST's `removal: retain` sets it on data resources). */
  retainOnDelete?: boolean;
  /** Pulumi refuses to delete it (and so to replace it) while this is set. */
  protect?: boolean;
}

export interface BuiltFunction {
  /** The handler in SST's notation, as infra/ gave it. */
  source: string;
  /** The handler inside the bundle, as Lambda is given it. */
  handler: string;
  out: string;
  /** What the function links, as sealed into its resource.enc. */
  links: Record<string, Record<string, unknown>>;
  /** The deployed code, as the component zipped it (bundle, resource.enc and copyFiles). */
  zip: string;
}

export interface DeployResult {
  app: Record<string, unknown>;
  resources: RecordedResource[];
  outputs: Record<string, unknown>;
  /** What the stand-in of the CLI's Runtime.Build was asked and built, by function ID (the sst.aws.Function's name). */
  builds: Record<string, BuiltFunction>;
  /** The deploy's working directory (the CLI's `.sst`): each function's code.zip is in artifacts/<function ID>/. The caller removes it. */
  workDir: string;
  error?: string;
}

const require = createRequire(join(platformDir, 'package.json'));

/** The SST CLI's esbuild options for the config (pkg/js/js.go Build). */
const cliBanner = `
import { createRequire as topLevelCreateRequire } from 'module';
const require = topLevelCreateRequire(import.meta.url);
import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"
const __filename = topLevelFileUrlToPath(import.meta.url)
const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))
`;
const cliExternal = ['@pulumi/*', 'undici', '@pulumiverse/*', '@sst-provider/*', '@aws-sdk/*', 'esbuild', 'archiver', 'glob', 'vite'];

/** The CLI prepends the provider globals to every file of the app (not of .sst). */
function injectGlobals(globals: string): Plugin {
  return {
    name: 'InjectGlobals',
    setup(build) {
      build.onLoad({ filter: /\.(js|ts|jsx|tsx)$/ }, (args) => {
        const contents = readFileSync(args.path, 'utf8');
        const ext = args.path.split('.').pop()!;
        return { contents: args.path.includes('.sst') ? contents : `${globals}\n${contents}`, loader: ext as 'js' | 'ts' | 'jsx' | 'tsx' };
      });
    },
  };
}

async function bundle(code: string, define: Record<string, string>, outfile: string): Promise<void> {
  const lock = JSON.parse(readFileSync(join(repositoryRoot, '.sst', 'provider-lock.json'), 'utf8')) as { alias: string; package: string }[];
  const globals = [
    ...lock.map((entry) => `import * as ${entry.alias} from "${entry.package}";`),
    `import * as sst from "${join(platformDir, 'src/components')}";`,
  ].join('\n');
  await build({
    stdin: { contents: code, resolveDir: repositoryRoot, sourcefile: 'eval.ts', loader: 'ts' },
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    mainFields: ['module', 'main'],
    nodePaths: [join(platformDir, 'node_modules')],
    external: cliExternal,
    banner: { js: cliBanner },
    define,
    inject: [join(platformDir, 'src/shim/run.js')],
    plugins: [injectGlobals(globals)],
    logLevel: 'silent',
  });
}

/** The CLI's RPC endpoint (SST_SERVER) for what the components ask of it during a deploy. */
function startCli(work: string, artifacts: string, builds: DeployResult['builds'], bundles: string | undefined): Promise<Server> {
  const methods: Record<string, (args: never) => Promise<unknown> | unknown> = {
    'Provider.Aws.Bootstrap': ({ region }: { region: string }) => ({
      asset: `sst-asset-${region}`,
      assetEcrRegistryId: fakeAccount,
      assetEcrUrl: `${fakeAccount}.dkr.ecr.${region}.amazonaws.com/sst-asset`,
      state: `sst-state-${region}`,
      appsyncHttp: '',
      appsyncRealtime: '',
    }),
    'Runtime.Build': async (input: BuildInput) => {
      const result = await buildHandler(repositoryRoot, artifacts, input, bundles);
      builds[input.functionID] = {
        source: input.handler,
        handler: result.handler,
        out: result.out,
        links: (input.links ?? {}) as BuiltFunction['links'],
        zip: join(work, 'artifacts', input.functionID, 'code.zip'),
      };
      return result;
    },
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', async () => {
      const { method, params } = JSON.parse(body) as { method: string; params: unknown[] };
      const handler = methods[method];
      const reply = handler
        ? await Promise.resolve(handler(params[0] as never)).then(
            (result) => ({ result }),
            (error: Error) => ({ error: error.message }),
          )
        : { error: `rpc: can't find method ${method}` };
      // The components' client keeps sockets alive (Node's default agent); a build can outlast the server's idle
      // timeout, and a reused socket the server has just closed is an ECONNRESET. One request per connection.
      response.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(reply));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A registered resource's URN, which the engine (here the mocks' monitor) assigned. */
const urnOf = (resource: { urn: unknown }) =>
  new Promise<string>((resolve) => (resource.urn as { apply(callback: (urn: string) => void): unknown }).apply(resolve));

const progress: string[] = [];
/** A failed apply (a build error, a thrown VisibleError) surfaces only as an unhandled rejection, and the stack then never settles. */
let onFailure: (reason: string) => void = () => {};
process.on('unhandledRejection', (reason) => onFailure(reason instanceof Error ? reason.message : String(reason)));
const step = (name: string) => progress.push(`${name}@${process.uptime().toFixed(1)}s`);

export async function deploy(request: DeployRequest): Promise<DeployResult> {
  Object.assign(process.env, request.env, { SST_TELEMETRY_DISABLED: '1', AWS_REGION: fakeRegion });
  const work = mkdtempSync(join(tmpdir(), 'hatchery-sst-deploy-'));
  const artifacts = join(work, 'builds');
  mkdirSync(artifacts);
  const builds: DeployResult['builds'] = {};
  const cli = await startCli(work, artifacts, builds, request.bundles);
  process.env.SST_SERVER = `http://127.0.0.1:${(cli.address() as AddressInfo).port}`;
  const app = await appConfig(request.stage);
  const resources: RecordedResource[] = [];
  const outfile = join(platformDir, `sst.config.${process.pid}.${Date.now()}.mjs`);
  try {
    const $cli = {
      command: 'deploy',
      dev: false,
      paths: { home: join(work, 'home'), root: repositoryRoot, work, platform: platformDir },
      state: { version: {} },
    };
    await bundle(
      `import { run } from "${join(platformDir, 'src/auto/run.ts')}";
       import mod from "${join(repositoryRoot, request.config ?? 'sst.config.ts')}";
       const result = await run(mod.run);
       export default result;`,
      { $app: JSON.stringify(app), $cli: JSON.stringify($cli), $dev: 'false' },
      outfile,
    );
    step('bundled');
    const pulumi = require('@pulumi/pulumi') as typeof import('@pulumi/pulumi');
    const optionsOf: [RecordedResource, { retainOnDelete?: boolean; protect?: boolean }, { urn: unknown }][] = [];
    const pendingDependencies: Promise<unknown>[] = [];
    await pulumi.runtime.setMocks(
      {
        newResource(args) {
          // A dynamic resource's inputs carry its provider's serialized code; only its own inputs matter.
          const { __provider: _code, ...inputs } = args.inputs as Record<string, unknown>;
          args.inputs = inputs;
          const state = mockResource(args.type, args.name, inputs);
          const recorded = resources.find((resource) => resource.type === args.type && resource.name === args.name);
          if (recorded) Object.assign(recorded, { id: state.id, inputs: args.inputs, state: state.state, custom: args.custom ?? true });
          else
            resources.push({
              type: args.type,
              name: args.name,
              id: state.id,
              custom: args.custom ?? true,
              inputs: args.inputs,
              state: state.state,
              dependsOn: [],
            });
          return state;
        },
        call: (args) => mockCall(args.token, args.inputs as Record<string, unknown>),
      },
      app.name as string,
      request.stage,
      false,
    );
    const failed = new Promise<never>((_resolve, reject) => (onFailure = (reason) => reject(new Error(reason))));
    const stack = pulumi.runtime.runInPulumiStack(async () => {
      pulumi.runtime.registerStackTransformation((args) => {
        const entry: RecordedResource = {
          type: args.type,
          name: args.name,
          custom: true,
          inputs: {},
          state: {},
          dependsOn: [],
          parent: (args.opts.parent as { __name?: string } | undefined)?.__name,
        };
        const existing = resources.find((resource) => resource.type === args.type && resource.name === args.name);
        const target = existing ?? entry;
        if (!existing) resources.push(entry);
        target.parent = entry.parent;
        // SST's own transformations run after this one and set options on the same object.
        optionsOf.push([target, args.opts, args.resource]);
        const dependsOn = args.opts.dependsOn;
        if (dependsOn) {
          const list = Array.isArray(dependsOn) ? dependsOn : [dependsOn];
          for (const item of list) {
            if (pulumi.Resource.isInstance(item)) target.dependsOn.push((item as unknown as { __name: string }).__name);
            else
              pendingDependencies.push(
                new Promise((resolve) =>
                  (pulumi.output as (value: unknown) => { apply(callback: (value: unknown) => void): unknown })(item).apply((value: unknown) => {
                    for (const resource of Array.isArray(value) ? value : [value])
                      if (pulumi.Resource.isInstance(resource)) target.dependsOn.push((resource as unknown as { __name: string }).__name);
                    resolve(undefined);
                  }),
                ),
              );
          }
        }
        return undefined;
      });
      step('importing');
      const mod = (await import(pathToFileURL(outfile).href)) as { default: Record<string, unknown> };
      step('imported');
      return mod.default;
    });
    const outputs = await Promise.race([stack, failed]);
    step('stack outputs');
    await Promise.race([Promise.all(pendingDependencies), failed]);
    step('dependencies');
    for (const [resource, options] of optionsOf)
      Object.assign(resource, { retainOnDelete: options.retainOnDelete ?? false, protect: options.protect ?? false });
    // Internal to Pulumi, and what its own `disconnect` waits on: every resource registration settled.
    await Promise.race([(pulumi.runtime as unknown as { waitForRPCs(): Promise<void> }).waitForRPCs(), failed]);
    await Promise.race([Promise.all(optionsOf.map(([resource, , created]) => urnOf(created).then((urn) => (resource.urn = urn)))), failed]);
    return { app, resources, outputs: (outputs ?? {}) as Record<string, unknown>, builds, workDir: work };
  } catch (error) {
    return { app, resources, outputs: {}, builds, workDir: work, error: error instanceof Error ? error.message : String(error) };
  } finally {
    rmSync(outfile, { force: true });
    cli.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const [requestFile, resultFile] = process.argv.slice(2) as [string, string];
  const request = JSON.parse(readFileSync(requestFile, 'utf8')) as DeployRequest;

  const watchdog = setTimeout(
    () => {
      process.stderr.write(`deploy did not finish; stages: ${progress.join(' > ')}\n`);

      process.exit(3);
    },
    Number(process.env.DEPLOY_TIMEOUT_MS ?? 400_000),
  );
  const result = await deploy(request);
  clearTimeout(watchdog);
  writeFileSync(
    resultFile,
    JSON.stringify(result, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)),
  );
  process.exit(0);
}
