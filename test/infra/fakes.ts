import { randomBytes } from 'node:crypto';

/**
 * Recording fakes of SST's globals (the surface infra/sst-globals.d.ts
 * declares): every component records its name and arguments, link
 * properties mirror what SST's components expose to linked code, and
 * transforms are applied to the arguments SST would start from. AWS cannot
 * be reached here, so sst.config.ts runs against these.
 */

/** A deployment-time value, known here at once; `secret` marks values that must never appear in plain text. */
export class FakeOutput<T> {
  constructor(
    readonly value: T,
    readonly secret = false,
  ) {}

  apply<U>(callback: (value: T) => U | FakeOutput<U>): FakeOutput<U> {
    const result = callback(this.value);
    return result instanceof FakeOutput ? new FakeOutput(result.value, this.secret || result.secret) : new FakeOutput(result, this.secret);
  }
}

const output = <T>(value: T, secret = false) => new FakeOutput(value, secret);

/** Every recorded component: its SST type, name and arguments as given. */
export abstract class Component {
  abstract readonly type: string;
  constructor(
    /** The name given in the config (SST's `.name` is often the physical name, an output). */
    readonly logicalName: string,
    readonly args: Record<string, unknown>,
    recording: Recording,
  ) {
    recording.components.push(this);
  }
  /** What linked code reads as Resource.<name>; undefined when the component is not linkable. */
  linkProperties(): Record<string, unknown> | undefined {
    return undefined;
  }
}

/** A Lambda function SST would create: standalone, or behind a route of either API. */
export interface DeployedFunction {
  /** `Function Migrator`, `GET /editions`, `$connect` */
  key: string;
  via: 'function' | 'http' | 'hub';
  args: Record<string, unknown>;
  routeArgs?: Record<string, unknown>;
}

export interface Recording {
  stage: string;
  components: Component[];
  functions: DeployedFunction[];
  routerRoutes: { pattern: string; url: unknown; args: unknown }[];
}

export interface FakeOptions {
  stage?: string;
  /** Physical names to use instead of made-up ones (the local table, when real handlers run against the record). */
  physicalNames?: { Table?: string };
  /** The hub's management endpoint (the local gateway's, when real handlers run). */
  hubManagementEndpoint?: string;
}

export class SecretMissingError extends Error {}

/** Resolves outputs inside plain arrays and objects; components are left as they are. */
export function resolve(value: unknown): unknown {
  if (value instanceof FakeOutput) return resolve(value.value);
  if (value instanceof Component) return value;
  if (Array.isArray(value)) return value.map(resolve);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item)]));
  }
  return value;
}

/** Paths (a.b.0.c) of every secret output inside a value, not descending into components. */
export function secretPaths(value: unknown, path = ''): string[] {
  if (value instanceof FakeOutput) return value.secret ? [path || '.'] : secretPaths(value.value, path);
  if (value instanceof Component) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => secretPaths(item, `${path}.${index}`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => secretPaths(item, `${path}.${key}`));
  return [];
}

function deepMerge(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    const current = target[key];
    if (value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object' && !Array.isArray(current)) {
      deepMerge(current as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      target[key] = value;
    }
  }
}

/** SST's transform(): a function edits the arguments in place, an object is merged into them. */
function applyTransform(transform: unknown, name: string, args: Record<string, unknown>): Record<string, unknown> {
  if (typeof transform === 'function') transform(args, {}, name);
  else if (transform && typeof transform === 'object') deepMerge(args, transform as Record<string, unknown>);
  return args;
}

const region = 'eu-west-1';
const account = '123456789012';

/** Installs the fakes as globals and returns what they record. */
export function installSstFakes(options: FakeOptions = {}): Recording {
  const recording: Recording = { stage: options.stage ?? 'test', components: [], functions: [], routerRoutes: [] };
  const physical = (name: string) => `hatchery-${recording.stage}-${name}-${randomBytes(3).toString('hex')}`;

  class Secret extends Component {
    readonly type = 'sst:sst:Secret';
    readonly value: FakeOutput<string>;
    readonly placeholder: string | undefined;
    readonly name: FakeOutput<string>;
    constructor(name: string, placeholder?: string) {
      super(name, { placeholder }, recording);
      this.name = output(name);
      this.placeholder = placeholder;
      // As SST does: the stage's value arrives in the environment, else the placeholder, else the deploy fails.
      const value = process.env[`SST_SECRET_${name}`] ?? placeholder;
      if (typeof value !== 'string') throw new SecretMissingError(`Set a value for ${name} with \`sst secret set ${name} <value>\``);
      this.value = output(value, true);
    }
    override linkProperties() {
      return { value: this.value };
    }
  }

  class Linkable extends Component {
    readonly type = 'sst:sst:Linkable';
    readonly name: FakeOutput<string>;
    constructor(name: string, definition: { properties: Record<string, unknown> }) {
      super(name, definition, recording);
      this.name = output(name);
    }
    get properties() {
      return this.args.properties as Record<string, unknown>;
    }
    override linkProperties() {
      return this.properties;
    }
  }

  class Vpc extends Component {
    readonly type = 'sst:aws:Vpc';
    readonly id = output(`vpc-${randomBytes(4).toString('hex')}`);
    constructor(name: string, args: Record<string, unknown> = {}) {
      super(name, args, recording);
    }
  }

  class Postgres extends Component {
    readonly type = 'sst:aws:Postgres';
    readonly host = output(`${physical('database')}.proxy-abcdefghijkl.${region}.rds.amazonaws.com`);
    readonly port = output(5432);
    readonly username = output('postgres');
    readonly password = output(randomBytes(16).toString('hex'), true);
    readonly database = output('hatchery');
    constructor(name: string, args: Record<string, unknown>) {
      super(name, args, recording);
    }
    override linkProperties() {
      return { host: this.host, port: this.port, username: this.username, password: this.password, database: this.database };
    }
  }

  class Dynamo extends Component {
    readonly type = 'sst:aws:Dynamo';
    readonly name: FakeOutput<string>;
    readonly arn: FakeOutput<string>;
    constructor(name: string, args: Record<string, unknown>) {
      super(name, args, recording);
      const tableName = (options.physicalNames as Record<string, string> | undefined)?.[name] ?? physical(name);
      this.name = output(tableName);
      this.arn = output(`arn:aws:dynamodb:${region}:${account}:table/${tableName}`);
    }
    override linkProperties() {
      return { name: this.name };
    }
  }

  class Function extends Component {
    readonly type = 'sst:aws:Function';
    readonly name: FakeOutput<string>;
    readonly arn: FakeOutput<string>;
    constructor(name: string, args: Record<string, unknown>) {
      super(name, args, recording);
      const functionName = physical(name);
      this.name = output(functionName);
      this.arn = output(`arn:aws:lambda:${region}:${account}:function:${functionName}`);
      recording.functions.push({ key: `Function ${name}`, via: 'function', args });
    }
  }

  const handlerArgs = (handler: string | Record<string, unknown>) => (typeof handler === 'string' ? { handler } : { ...handler });

  class ApiGatewayV2 extends Component {
    readonly type = 'sst:aws:ApiGatewayV2';
    readonly url = output(`https://${randomBytes(5).toString('hex')}.execute-api.${region}.amazonaws.com`);
    readonly stageArgs: Record<string, unknown>;
    constructor(name: string, args: Record<string, unknown> = {}) {
      super(name, args, recording);
      const transform = args.transform as Record<string, unknown> | undefined;
      this.stageArgs = applyTransform(transform?.stage, `${name}Stage`, { name: '$default', autoDeploy: true });
    }
    route(rawRoute: string, handler: string | Record<string, unknown>, args: Record<string, unknown> = {}) {
      const transform = (this.args.transform as { route?: { handler?: unknown } } | undefined)?.route;
      const fn = applyTransform(transform?.handler, `${this.logicalName}Handler`, handlerArgs(handler));
      recording.functions.push({ key: rawRoute, via: 'http', args: fn, routeArgs: args });
      return {};
    }
  }

  class ApiGatewayWebSocket extends Component {
    readonly type = 'sst:aws:ApiGatewayWebSocket';
    readonly apiId = randomBytes(5).toString('hex');
    readonly url = output(`wss://${this.apiId}.execute-api.${region}.amazonaws.com/$default`);
    readonly managementEndpoint = output(options.hubManagementEndpoint ?? `https://${this.apiId}.execute-api.${region}.amazonaws.com/$default`);
    readonly nodes = { api: { id: output(this.apiId), executionArn: output(`arn:aws:execute-api:${region}:${account}:${this.apiId}`) } };
    readonly stageArgs: Record<string, unknown>;
    constructor(name: string, args: Record<string, unknown> = {}) {
      super(name, args, recording);
      const transform = args.transform as Record<string, unknown> | undefined;
      this.stageArgs = applyTransform(transform?.stage, `${name}Stage`, { name: '$default', autoDeploy: true });
    }
    route(routeKey: string, handler: string | Record<string, unknown>, args: Record<string, unknown> = {}) {
      const transform = (this.args.transform as { route?: { handler?: unknown } } | undefined)?.route;
      const fn = applyTransform(transform?.handler, `${this.logicalName}Handler`, handlerArgs(handler));
      // The route SST creates: IAM authorization only when asked for on $connect.
      const iam = (args.auth as { iam?: boolean } | undefined)?.iam === true && routeKey === '$connect';
      recording.functions.push({ key: routeKey, via: 'hub', args: fn, routeArgs: { routeKey, authorizationType: iam ? 'AWS_IAM' : 'NONE' } });
      return {};
    }
    override linkProperties() {
      return { url: this.url, managementEndpoint: this.managementEndpoint };
    }
  }

  class Cluster extends Component {
    readonly type = 'sst:aws:Cluster';
    constructor(name: string, args: Record<string, unknown>) {
      super(name, args, recording);
    }
  }

  class Service extends Component {
    readonly type = 'sst:aws:Service';
    constructor(name: string, args: Record<string, unknown>) {
      super(name, args, recording);
    }
  }

  class Router extends Component {
    readonly type = 'sst:aws:Router';
    readonly url = output(`https://d${randomBytes(6).toString('hex')}.cloudfront.net`);
    readonly cachePolicyArgs: Record<string, unknown>;
    constructor(name: string, args: Record<string, unknown> = {}) {
      super(name, args, recording);
      const transform = args.transform as Record<string, unknown> | undefined;
      // The cache policy SST's Router starts from before the transform.
      this.cachePolicyArgs = applyTransform(transform?.cachePolicy, `${name}ServerCachePolicy`, {
        defaultTtl: 0,
        minTtl: 0,
        maxTtl: 31536000,
        parametersInCacheKeyAndForwardedToOrigin: {
          cookiesConfig: { cookieBehavior: 'none' },
          headersConfig: { headerBehavior: 'whitelist', headers: { items: ['x-open-next-cache-key', 'x-forwarded-host'] } },
          queryStringsConfig: { queryStringBehavior: 'all' },
        },
      });
    }
    route(pattern: string, url: unknown, args?: unknown) {
      recording.routerRoutes.push({ pattern, url: resolve(url), args: resolve(args) });
    }
  }

  class Invocation extends Component {
    readonly type = 'aws:lambda:Invocation';
    constructor(name: string, args: Record<string, unknown>) {
      super(name, args, recording);
    }
  }

  Object.assign(globalThis, {
    $config: (config: unknown) => config,
    $app: { name: 'hatchery', stage: recording.stage },
    $interpolate: (literals: TemplateStringsArray, ...values: unknown[]) => {
      const secret = values.some((value) => secretPaths(value).length > 0);
      return output(literals.reduce((text, literal, index) => text + String(resolve(values[index - 1])) + literal), secret);
    },
    sst: {
      Secret,
      Linkable,
      aws: { Vpc, Postgres, Dynamo, Function, ApiGatewayV2, ApiGatewayWebSocket, Cluster, Service, Router },
    },
    aws: {
      lambda: { Invocation },
      getRegionOutput: () => ({ name: output(region) }),
    },
  });
  return recording;
}
