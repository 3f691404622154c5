import { parseArgs } from 'node:util';
import { localIdentityProvider } from './idp';
import { findRunningStack, StartupError } from './record';
import { localSettings } from './settings';

const usage = 'usage: npm run token -- --uid <user id> --email <email> [--name <name>] [--expires-in <seconds>]';

function parse() {
  const { values } = parseArgs({
    options: {
      uid: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      'expires-in': { type: 'string', default: '3600' },
    },
  });
  if (!values.uid || !values.email) throw new StartupError(usage);
  const expiresIn = values['expires-in'];
  if (!/^[1-9][0-9]{0,8}$/.test(expiresIn)) throw new StartupError(`--expires-in takes a whole number of seconds (1 or more), not '${expiresIn}'`);
  return { uid: values.uid, email: values.email, name: values.name, expiresInSeconds: Number(expiresIn) };
}

async function main(): Promise<void> {
  const args = parse();
  const stack = await findRunningStack(localSettings().HATCHERY_DATA_DIR);
  if (!stack.idpKeyFile || !stack.idpProjectId) throw new StartupError(`the Hatchery on ${stack.url} did not record its identity provider; restart it`);
  const idp = await localIdentityProvider({ keyFile: stack.idpKeyFile, projectId: stack.idpProjectId, create: false });
  const token = await idp.signToken({ uid: args.uid, email: args.email, name: args.name }, { expiresInSeconds: args.expiresInSeconds });
  process.stderr.write(`A token for ${args.uid}, valid ${args.expiresInSeconds} s, from the local identity provider of ${stack.url}:\n`);
  process.stdout.write(`${token}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`npm run token: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
