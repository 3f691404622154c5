import type { Tracer } from '@aws-lambda-powertools/tracer';
import { metricsService } from './metrics';

/**
 * X-Ray tracing (Powertools Tracer) runs in Lambda only, and there unless
 * POWERTOOLS_TRACE_ENABLED=false. Elsewhere (the local stack, the tests, the
 * listener on Fargate, which has no X-Ray daemon) the SDK is not even loaded:
 * importing it is most of tracing's cold-start cost.
 */
export const tracingEnabled = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME) && process.env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';

export const tracer: Tracer | undefined = tracingEnabled
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName: metricsService, captureHTTPsRequests: false })
  : undefined;

/** What a subsegment records besides its name and times: `aws` for a call to an AWS service (its `operation`, e.g. UpdateItem). */
export interface TraceDetails {
  namespace?: 'remote' | 'aws';
  aws?: { operation: string } & Record<string, unknown>;
}

/** Runs `work` in a subsegment of the current segment (a database round trip, an AWS call), recording its error. */
export async function traced<T>(name: string, work: () => Promise<T>, details: TraceDetails = {}): Promise<T> {
  const parent = tracer?.getSegment();
  if (!tracer || !parent) return work();
  const subsegment = parent.addNewSubsegment(name);
  subsegment.namespace = details.namespace ?? 'remote';
  if (details.aws) subsegment.addAttribute('aws', details.aws);
  tracer.setSegment(subsegment);
  try {
    return await work();
  } catch (error) {
    subsegment.addError(error as Error);
    throw error;
  } finally {
    subsegment.close();
    tracer.setSegment(parent);
  }
}

interface SdkClient {
  middlewareStack: { identify(): string[]; remove(name: string): boolean };
}

/**
 * The client, its every call traced as a subsegment, when tracing is on.
 * Powertools also appends to the user agent in a middleware placed after the
 * SDK's own; on a client that dropped that one (the management API's, see
 * realtime/management.ts) every call would fail, so it goes too.
 */
export function traceAwsClient<T extends SdkClient>(client: T): T {
  if (!tracer) return client;
  const traced = tracer.captureAWSv3Client(client);
  if (!client.middlewareStack.identify().some((entry) => entry.startsWith('getUserAgentMiddleware'))) client.middlewareStack.remove('addPowertoolsToUserAgent');
  return traced;
}
