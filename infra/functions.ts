import type { DatabaseUrl } from './database';
import type { Secrets } from './secrets';
import type { DeploySettings } from './settings';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';
import { lambdaRuntime } from './runtime';

/** What every function of the service gets: the network, the linked resources the configuration reads, and the deploy's settings it reads. */
export interface FunctionContext {
  vpc: sst.aws.Vpc;
  link: NonNullable<sst.aws.FunctionArgs['link']>;
  environment: Record<string, string>;
}

export function functionContext(
  vpc: sst.aws.Vpc,
  databaseUrl: DatabaseUrl,
  table: sst.aws.Dynamo,
  secrets: Secrets,
  settings: DeploySettings,
): FunctionContext {
  return {
    vpc,
    link: [databaseUrl, table, secrets.idpProjectId, secrets.corsOrigins, secrets.corsAllowedHostSuffixes, secrets.originVerify],
    environment: serviceEnvironment(settings),
  };
}

/** The service's configuration that a deploy sets by plain variable, for the functions and the listener alike. */
export const serviceEnvironment = (settings: DeploySettings) => ({ INDEXER_SCHEMA: settings.indexerSchema });

/** Sizes by kind of work: HTTP handlers answer users; hub handlers answer a ping every 15 s per client; the migrator runs once per deploy. */
export const sizing = {
  http: { memory: '1024 MB', timeout: `${functionTimeoutSeconds.http} seconds` },
  hub: { memory: '512 MB', timeout: `${functionTimeoutSeconds.hub} seconds` },
  migrator: { memory: '512 MB', timeout: '5 minutes' },
  /** One full vCPU (1,769 MB): posting (signing each request) is CPU-bound. */
  fanOut: { memory: '1769 MB', timeout: `${functionTimeoutSeconds.fanOut} seconds` },
} as const satisfies Record<string, Pick<sst.aws.FunctionArgs, 'memory' | 'timeout'>>;

/** The CloudWatch namespace of the service's metrics: one per stage, so stages sharing an account stay apart. */
export const metricsNamespace = (): string => `Hatchery/${$app.stage}`;

/** AWS Lambda's limit on a function's description (CreateFunction rejects a longer one). */
const lambdaDescriptionLimit = 256;

/** A description Lambda accepts: the text, cut at the limit with an ellipsis. */
function lambdaDescription(text: string): string {
  return text.length <= lambdaDescriptionLimit ? text : `${text.slice(0, lambdaDescriptionLimit - 1)}…`;
}

/**
 * SST's Function trusts the account root as well as Lambda in every role it
 * makes (its check for `sst dev` tests an Output, which is always truthy), so
 * any principal of the account allowed sts:AssumeRole could act as a
 * function. A deployed function's role trusts Lambda alone.
 */
const lambdaOnlyTrust: NonNullable<sst.aws.FunctionArgs['transform']> = {
  role: (args) => {
    args.assumeRolePolicy = JSON.stringify(aws.iam.assumeRolePolicyForPrincipal({ Service: 'lambda.amazonaws.com' }));
  },
};

/**
 * X-Ray active tracing: Lambda samples and opens each invocation's segment,
 * and the function may send the Tracer's subsegments (SST has no argument
 * for either). The X-Ray write actions take no resource-level permissions.
 */
const activeTracing: NonNullable<sst.aws.FunctionArgs['transform']>['function'] = (args) => {
  args.tracingConfig = { mode: 'Active' };
};
const xrayWrite: sst.aws.FunctionPermissionArgs = { actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] };

/**
 * One Lambda function: Node.js 24 on arm64 (Graviton, about 20% cheaper per
 * GB-second), its own minified ESM bundle of just what its handler imports,
 * in the VPC, with the service's links, traced by X-Ray. `handler` is SST's notation.
 */
export function lambda(
  handler: string,
  context: FunctionContext,
  size: (typeof sizing)[keyof typeof sizing],
  description: string,
  extra: Omit<sst.aws.FunctionArgs, 'handler' | 'vpc' | 'link' | 'memory' | 'timeout' | 'description' | 'permissions'> & {
    permissions?: sst.aws.FunctionPermissionArgs[];
  } = {},
): sst.aws.FunctionArgs {
  return {
    handler,
    description: lambdaDescription(description),
    runtime: lambdaRuntime,
    architecture: 'arm64',
    nodejs: { format: 'esm', minify: true },
    vpc: context.vpc,
    link: context.link,
    ...size,
    ...extra,
    environment: { METRICS_NAMESPACE: metricsNamespace(), ...context.environment, ...extra.environment },
    permissions: [...(extra.permissions ?? []), xrayWrite],
    transform: { ...extra.transform, ...lambdaOnlyTrust, function: activeTracing },
  };
}
