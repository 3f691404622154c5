import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { platformDir } from '../sst/platform';

/**
 * The input names of the installed SDK's Args interface for a Pulumi type
 * token (aws:<module>/<file>:<Type>, random:index/<file>:<Type>), read from its
 * declarations in SST's platform: derive.ts maps provider attributes onto
 * them, and stateful.test.ts checks the record names nothing else.
 */
export function argsOf(type: string): string[] {
  const [, pkg, module, file, resource] = /^(aws|random):([^/]+)\/([^:]+):(.+)$/.exec(type) ?? [];
  if (!pkg) throw new Error(`cannot read the type token ${type}`);
  const dir = join(platformDir, 'node_modules', '@pulumi', pkg);
  const dts = pkg === 'random' ? join(dir, `${file}.d.ts`) : join(dir, module!, `${file}.d.ts`);
  const body = new RegExp(`export interface ${resource}Args \\{([\\s\\S]*?)\\n\\}`).exec(readFileSync(dts, 'utf8'))?.[1];
  if (!body) throw new Error(`${dts} has no ${resource}Args`);
  return [...body.matchAll(/^\s{4}(\w+)\??:/gm)].map((match) => match[1]!);
}
