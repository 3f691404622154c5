import middy from '@middy/core';
import { lambdaContext } from '@hatchery/local/gateway/lambda';
import { addLogContext, logger } from '@hatchery/platform/telemetry/logger';
import { injectLogContext } from '@hatchery/functions/middleware/request-logger';

/**
 * Run by logger.test.ts in a fresh process, as a Lambda instance would run:
 * two invocations of a Middy chain with the service's log context, each
 * logging what a handler may log (a viem BigInt, a circular object, an error
 * with a cause, a secret), then a line outside any invocation. Its stdout is
 * only the lines the service's logger wrote.
 */
const child = logger().child({ component: 'calls' });

const handler = middy<{ requestId: string }, void>()
  .use(injectLogContext())
  .handler(async (event) => {
    addLogContext({ requestId: event.requestId, route: 'GET /calls' });
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const selfCaused: Error & { cause?: unknown } = new Error('its own cause');
    selfCaused.cause = selfCaused;
    logger().info({ blockNumber: 23456789n, circular }, 'values');
    logger().error({ err: new Error('read failed', { cause }) }, 'failed');
    logger().error({ err: selfCaused }, 'self-caused');
    logger().warn(
      {
        authorization: 'Bearer secret-a',
        headers: { authorization: 'Bearer secret-b', host: 'h' },
        body: { signature: '0xsecret-c', address: '0xabc' },
        token: 'secret-d',
      },
      'secrets',
    );
    logger().debug('detail');
    child.info({ n: 1 }, 'child line');
  });

await handler({ requestId: 'request-1' }, lambdaContext('calls-function'));
await handler({ requestId: 'request-2' }, lambdaContext('calls-function'));
logger().info('outside');
