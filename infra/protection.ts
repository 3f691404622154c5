import { statefulResources } from './stateful';

/**
 * Protected stages (sst.config.ts) set Pulumi's `protect` and `retainOnDelete`
 * on every stateful resource: Pulumi then refuses a deploy that would delete
 * or replace one, and a resource that leaves the config stays in AWS. SST's
 * own `protect` only stops `sst remove`, and its `removal: 'retain'` covers the
 * table and the instance but not the proxy, the secrets or the log groups.
 */
export function protectStatefulResources(): void {
  $util.runtime.registerStackTransformation((args) => {
    if (!(args.type in statefulResources)) return undefined;
    // In place, as SST's own transformations set their options.
    Object.assign(args.opts, { protect: true, retainOnDelete: true });
    return args;
  });
}
