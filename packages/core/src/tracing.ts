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

/** Runs `work` in a subsegment of the current segment (a database round trip), recording its error. */
export async function traced<T>(name: string, work: () => Promise<T>): Promise<T> {
  const parent = tracer?.getSegment();
  if (!tracer || !parent) return work();
  const subsegment = parent.addNewSubsegment(name);
  subsegment.namespace = 'remote';
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

/** The client, its every call traced as a subsegment, when tracing is on. */
export function traceAwsClient<T>(client: T): T {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}
