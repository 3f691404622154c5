import { lambdaContext, loadHandler } from '@hatchery/local/gateway/lambda';

/**
 * Run by logging.test.ts in a fresh process, as a Lambda instance would run:
 * invokes the handlers named in INVOCATIONS one after the other; its stdout
 * is then only what the handlers printed (pino's lines and the EMF lines).
 */
const invocations = JSON.parse(process.env.INVOCATIONS ?? '[]') as { handler: string; event: unknown; functionName: string }[];
for (const { handler, event, functionName } of invocations) {
  const run = await loadHandler(handler);
  await run(event, lambdaContext(functionName));
}
process.exit(0);
