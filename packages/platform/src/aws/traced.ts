import type { InitializeHandlerArguments, MiddlewareStack } from '@smithy/types';
import { awsSettings } from '../config/aws';
import { traced } from '../telemetry/tracing';

/** The tables a DynamoDB call names, as the X-Ray SDK's client capture recorded them. */
function tablesOf(input: unknown): Record<string, unknown> {
  const { TableName, RequestItems } = (input ?? {}) as { TableName?: string; RequestItems?: Record<string, unknown> };
  if (TableName !== undefined) return { table_name: TableName };
  return RequestItems ? { table_names: Object.keys(RequestItems) } : {};
}

/**
 * Records each call of an SDK client, its retries included, as one AWS
 * subsegment of the invocation's trace (`service`, e.g. DynamoDB, is its name).
 * The trace header itself (`X-Amzn-Trace-Id`) the SDK's recursion-detection
 * middleware adds to every request a Lambda function makes.
 */
export function traceCalls(client: { middlewareStack: MiddlewareStack<any, any> }, service: string): void {
  client.middlewareStack.add(
    (next, context) => (args: InitializeHandlerArguments<any>) =>
      traced(service, () => next(args), {
        namespace: 'aws',
        aws: { operation: String(context.commandName).replace(/Command$/, ''), region: awsSettings().AWS_REGION, ...tablesOf(args.input) },
      }),
    { step: 'initialize', name: 'hatcheryTraceCalls', override: true },
  );
}
