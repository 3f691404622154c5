import { logger } from '@hatchery/core/logger';
import { demoSizes } from './demo-data';
import { defaultDataDir, startStack } from './stack';

const stack = await startStack({
  port: Number(process.env.PORT ?? 3000),
  dataDir: defaultDataDir,
  persistent: true,
  databaseUrl: process.env.DATABASE_URL,
  dynamoEndpoint: process.env.DYNAMODB_ENDPOINT,
  demoData: demoSizes.demo,
});

logger().info({ url: stack.url, docs: `${stack.url}/docs`, hub: `${stack.url.replace('http', 'ws')}/hubs/events` }, 'Hatchery is running');
console.log(`\nHatchery is running at ${stack.url}  (API docs: ${stack.url}/docs)\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger().info({ signal }, 'stopping');
    void stack.stop().then(() => process.exit(0));
  });
}
