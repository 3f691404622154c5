/**
 * The part of SST v3's global API that sst.config.ts and infra/ use, as SST
 * documents it. `sst install` generates the full declarations into
 * .sst/platform/config.d.ts; SST itself never type-checks the config (it
 * bundles it with esbuild), so these let `tsc` check infra/ without installing
 * SST, whose install script downloads binaries. test/infra/fakes.ts implements
 * exactly this surface, recording every call.
 */

declare namespace $util {
  /** A value known only during deployment (Pulumi's Output). */
  interface Output<T> {
    apply<U>(callback: (value: T) => U | Output<U>): Output<U>;
  }
  type Input<T> = T | Output<T>;
  /** SST's transform: an object merged into a resource's args, or a function that edits them. */
  type Transform<T> = Partial<T> | ((args: T, opts: Record<string, unknown>, name: string) => void);
  interface Permission {
    actions: string[];
    resources: Input<string>[];
  }
  type Duration = `${number} ${'second' | 'seconds' | 'minute' | 'minutes'}`;
  type Size = `${number} ${'MB' | 'GB'}`;
}

declare namespace sst {
  /** A value set per stage with `sst secret set <Name> <value>`; linked resources read `.value`. */
  class Secret {
    constructor(name: string, placeholder?: string);
    readonly name: $util.Output<string>;
    readonly value: $util.Output<string>;
  }

  /** Any values made linkable; linked resources read them as `Resource.<Name>.<property>`. */
  class Linkable<Properties extends Record<string, unknown>> {
    constructor(name: string, definition: { properties: Properties });
    readonly name: $util.Output<string>;
    readonly properties: Properties;
  }

  type Link = Secret | Linkable<Record<string, unknown>> | aws.Dynamo | aws.Postgres | aws.ApiGatewayWebSocket;

  namespace aws {
    interface FunctionArgs {
      handler: string;
      description?: string;
      runtime?: 'nodejs20.x' | 'nodejs22.x';
      architecture?: 'x86_64' | 'arm64';
      memory?: $util.Size;
      timeout?: $util.Duration;
      vpc?: Vpc;
      link?: Link[];
      environment?: Record<string, $util.Input<string>>;
      permissions?: $util.Permission[];
      copyFiles?: { from: string; to?: string }[];
      nodejs?: { format?: 'esm' | 'cjs'; minify?: boolean; sourcemap?: boolean };
    }

    class Vpc {
      constructor(name: string, args?: { nat?: 'managed' | 'ec2'; az?: number; bastion?: boolean });
      readonly id: $util.Output<string>;
    }

    class Postgres {
      constructor(name: string, args: { vpc: Vpc; proxy?: boolean; version?: string; instance?: string; storage?: `${number} GB`; database?: string });
      readonly host: $util.Output<string>;
      readonly port: $util.Output<number>;
      readonly username: $util.Output<string>;
      readonly password: $util.Output<string>;
      readonly database: $util.Output<string>;
    }

    class Dynamo {
      constructor(
        name: string,
        args: {
          fields: Record<string, 'string' | 'number' | 'binary'>;
          primaryIndex: { hashKey: string; rangeKey?: string };
          ttl?: string;
        },
      );
      readonly name: $util.Output<string>;
      readonly arn: $util.Output<string>;
    }

    class Function {
      constructor(name: string, args: FunctionArgs);
      readonly name: $util.Output<string>;
      readonly arn: $util.Output<string>;
    }

    interface StageArgs {
      defaultRouteSettings?: { throttlingRateLimit?: number; throttlingBurstLimit?: number };
    }

    class ApiGatewayV2 {
      constructor(
        name: string,
        args?: {
          link?: Link[];
          cors?: boolean;
          accessLog?: { retention?: '1 week' | '1 month' | '3 months' | 'forever' };
          transform?: { stage?: $util.Transform<StageArgs>; route?: { handler?: $util.Transform<FunctionArgs> } };
        },
      );
      readonly url: $util.Output<string>;
      route(rawRoute: string, handler: string | FunctionArgs, args?: { auth?: false }): unknown;
    }

    class ApiGatewayWebSocket {
      constructor(
        name: string,
        args?: {
          accessLog?: { retention?: '1 week' | '1 month' | '3 months' | 'forever' };
          transform?: { stage?: $util.Transform<StageArgs>; route?: { handler?: $util.Transform<FunctionArgs> } };
        },
      );
      /** wss://<api>.execute-api.<region>.amazonaws.com/<stage> */
      readonly url: $util.Output<string>;
      /** https://<api>.execute-api.<region>.amazonaws.com/<stage>, for the management API client. */
      readonly managementEndpoint: $util.Output<string>;
      readonly nodes: { api: { executionArn: $util.Output<string> } };
      route(route: string, handler: string | FunctionArgs): unknown;
    }

    class Cluster {
      constructor(name: string, args: { vpc: Vpc });
    }

    class Service {
      constructor(
        name: string,
        args: {
          cluster: Cluster;
          image: { context: string; dockerfile: string };
          architecture?: 'x86_64' | 'arm64';
          cpu?: '0.25 vCPU' | '0.5 vCPU' | '1 vCPU';
          memory?: $util.Size;
          scaling?: { min: number; max: number };
          link?: Link[];
          permissions?: $util.Permission[];
          environment?: Record<string, $util.Input<string>>;
        },
      );
    }

    interface CachePolicyArgs {
      parametersInCacheKeyAndForwardedToOrigin: {
        headersConfig: { headerBehavior: string; headers?: { items: string[] } };
      } & Record<string, unknown>;
    }

    class Router {
      constructor(
        name: string,
        args?: {
          waf?: {
            rateLimitPerIp: number;
            managedRules?: { coreRuleSet?: boolean; knownBadInputs?: boolean; sqlInjection?: boolean };
          };
          transform?: { cachePolicy?: $util.Transform<CachePolicyArgs> };
        },
      );
      readonly url: $util.Output<string>;
      route(
        pattern: string,
        url: $util.Input<string>,
        args?: $util.Input<{ rewrite?: { regex: string; to: string }; readTimeout?: $util.Duration }>,
      ): void;
    }
  }
}

/** The Pulumi AWS provider, which SST exposes as the global `aws`. */
declare namespace aws {
  namespace lambda {
    /** Invokes a function when created or when its triggers change; a failed invocation fails the deploy. */
    class Invocation {
      constructor(name: string, args: { functionName: $util.Input<string>; input: string; triggers?: Record<string, string> });
      readonly result: $util.Output<string>;
    }
  }
  function getRegionOutput(): { name: $util.Output<string> };
}

interface SstAppInput {
  stage?: string;
}

interface SstApp {
  name: string;
  removal?: 'remove' | 'retain' | 'retain-all';
  protect?: boolean;
  home: 'aws';
  providers?: Record<string, unknown>;
}

interface SstConfig {
  app(input?: SstAppInput): SstApp;
  run(): Promise<Record<string, $util.Input<string>> | void>;
}

declare function $config(config: SstConfig): SstConfig;
declare const $app: { readonly name: string; readonly stage: string };
declare function $interpolate(literals: TemplateStringsArray, ...values: unknown[]): $util.Output<string>;
