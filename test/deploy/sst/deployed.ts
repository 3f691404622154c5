/**
 * Reading a recorded deploy: the AWS resources the real components produced,
 * found the way AWS connects them (a route's target integration, an
 * integration's function ARN, a function's role).
 */
import type { BuiltFunction, DeployResult, RecordedResource } from './deploy';

/** Pulumi's marker of a secret value, as the mocks record it. */
const secretSignature = '4dabf18193072939515e22adb298388d';

export function isSecret(value: unknown): value is { value: unknown } {
  return typeof value === 'object' && value !== null && secretSignature in value;
}

/** The value with every secret marker replaced by what it holds. */
export function reveal<T = unknown>(value: unknown): T {
  if (isSecret(value)) return reveal(value.value);
  if (Array.isArray(value)) return value.map((item) => reveal(item)) as T;
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, reveal(item)])) as T;
  return value as T;
}

/** Every string of a value that is not inside a secret marker, with its path. */
export function plainStrings(value: unknown, path = ''): [string, string][] {
  if (isSecret(value)) return [];
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, index) => plainStrings(item, `${path}[${index}]`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => plainStrings(item, `${path}.${key}`));
  return [];
}

export function ofType(result: DeployResult, type: string): RecordedResource[] {
  return result.resources.filter((resource) => resource.type === type);
}

export function only(result: DeployResult, type: string, name?: string): RecordedResource {
  const found = ofType(result, type).filter((resource) => name === undefined || resource.name === name);
  if (found.length !== 1) throw new Error(`expected one ${type}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
}

export const inputs = <T = Record<string, unknown>>(resource: RecordedResource): T => reveal<T>(resource.inputs);
export const state = <T = Record<string, unknown>>(resource: RecordedResource): T => reveal<T>(resource.state);

export interface DeployedFunction {
  /** The sst.aws.Function's name, which the CLI's build knows it by. */
  id: string;
  lambda: Record<string, unknown> & {
    name: string;
    description?: string;
    runtime: string;
    architectures: string[];
    memorySize: number;
    timeout: number;
    handler: string;
  };
  arn: string;
  /** What API Gateway's WebSocket integrations name it by. */
  invokeArn: string;
  build: BuiltFunction;
  environment: Record<string, string>;
  /** The statements of its role's inline policy. */
  statements: { Effect: string; Action: string[]; Resource: string[] }[];
  roleName: string;
  /** Its role's trust policy (who may assume it), as JSON. */
  trustPolicy: string;
}

export function deployedFunctions(result: DeployResult): DeployedFunction[] {
  const roles = new Map(ofType(result, 'aws:iam/role:Role').map((role) => [String(state(role).arn), role]));
  return ofType(result, 'aws:lambda/function:Function').map((fn) => {
    const lambda = inputs<DeployedFunction['lambda'] & { role: string; environment?: { variables?: Record<string, string> } }>(fn);
    const role = roles.get(lambda.role);
    if (!fn.parent || !role) throw new Error(`${fn.name}: no sst.aws.Function parent or no role`);
    const policies = (inputs<{ inlinePolicies?: { policy: string }[] }>(role).inlinePolicies ?? []).flatMap(
      (policy) => (JSON.parse(policy.policy) as { Statement: DeployedFunction['statements'] }).Statement,
    );
    return {
      id: fn.parent,
      lambda,
      arn: String(state(fn).arn),
      invokeArn: String(state(fn).invokeArn),
      build: result.builds[fn.parent]!,
      environment: lambda.environment?.variables ?? {},
      statements: policies,
      roleName: String(inputs(role).name),
      trustPolicy: String(inputs(role).assumeRolePolicy),
    };
  });
}

/** The function behind each route of an API Gateway API (HTTP or WebSocket), by route key. */
export function routesOf(
  result: DeployResult,
  api: RecordedResource,
): Map<string, { route: Record<string, unknown>; integration: Record<string, unknown>; fn: DeployedFunction }> {
  const apiId = api.id;
  const functions = new Map(deployedFunctions(result).flatMap((fn) => [[fn.arn, fn] as const, [fn.invokeArn, fn] as const]));
  const integrations = new Map(
    ofType(result, 'aws:apigatewayv2/integration:Integration').map((integration) => [integrationId(integration), inputs<Record<string, unknown>>(integration)]),
  );
  const routes = new Map<string, { route: Record<string, unknown>; integration: Record<string, unknown>; fn: DeployedFunction }>();
  for (const route of ofType(result, 'aws:apigatewayv2/route:Route').map((each) => inputs<Record<string, unknown>>(each))) {
    if (route.apiId !== apiId) continue;
    const integration = integrations.get(String(route.target).replace(/^integrations\//, ''))!;
    routes.set(String(route.routeKey), { route, integration, fn: functions.get(String(integration.integrationUri))! });
  }
  return routes;
}

const integrationId = (integration: RecordedResource) => String(integration.id);
