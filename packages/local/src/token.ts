import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { configSchema } from '@hatchery/core/config';
import { localIdentityProvider } from './idp';
import { defaultDataDir } from './stack';

const { values } = parseArgs({
  options: {
    uid: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    'expires-in': { type: 'string', default: '3600' },
  },
});

if (!values.uid || !values.email) {
  console.error('usage: npm run token -- --uid <user id> --email <email> [--name <name>] [--expires-in <seconds>]');
  process.exit(2);
}

const idp = await localIdentityProvider({
  keyFile: join(defaultDataDir, 'idp-key.json'),
  projectId: configSchema.shape.IDP_PROJECT_ID.parse(process.env.IDP_PROJECT_ID),
});
console.log(await idp.signToken({ uid: values.uid, email: values.email, name: values.name }, { expiresInSeconds: Number(values['expires-in']) }));
