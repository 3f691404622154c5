import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:dgram';
import { awsErrorShape, isThrottled } from '../aws/throttling';
import { invocationScoped } from '../invocation';
import { exceeds, jsonSafe, shortened } from './json-safe';
import { metricsService } from './metrics';

/**
 * X-Ray tracing runs in Lambda only, and there unless
 * POWERTOOLS_TRACE_ENABLED=false (Powertools' own switch, so a deployment's
 * settings keep their meaning). Elsewhere (the local stack, the tests, the
 * listener on Fargate, which has no X-Ray daemon) nothing is sent.
 *
 * Lambda's active tracing records each invocation itself (its facade segment);
 * what this adds are the subsegments inside it: the handler, and in it each
 * database round trip and AWS call. They are sent as independent subsegment
 * documents over UDP to the daemon Lambda runs, which is all a function needs
 * of the X-Ray SDK, so no bundle carries the SDK and its dependencies. The
 * handler's document carries its first calls inside it, so an
 * invocation costs one datagram; calls beyond those go in documents of their
 * own, naming their parent, so a fan-out's thousands of posts never make one
 * document larger than a datagram.
 */
const tracingEnabled = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME) && process.env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';

/** What a subsegment records besides its name and times: `aws` for a call to an AWS service (its `operation`, e.g. UpdateItem). */
interface TraceDetails {
  namespace?: 'remote' | 'aws';
  aws?: { operation: string } & Record<string, unknown>;
}

/** A subsegment as X-Ray records it (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-segmentdocuments.html). */
interface Subsegment {
  id: string;
  name: string;
  start_time: number;
  end_time: number;
  namespace?: 'remote' | 'aws';
  aws?: Record<string, unknown>;
  annotations?: Record<string, string | number | boolean>;
  /** How a failure is counted, as the X-Ray SDK counts it: `error` a 4xx, `throttle` (with `error`) a 429 or a throttled call, `fault` a 5xx or anything else. */
  error?: true;
  throttle?: true;
  fault?: true;
  http?: { response: { status: number } };
  cause?: { exceptions: { id: string; message: string; type: string }[] };
  subsegments?: Subsegment[];
}

/** A subsegment sent on its own: it names its trace and its parent. */
interface SubsegmentDocument extends Subsegment {
  type: 'subsegment';
  trace_id: string;
  parent_id: string;
}

/** The open subsegment of the running invocation that the next subsegments nest in, and the calls it holds so far. */
interface Parent {
  traceId: string;
  id: string;
  children: Subsegment[];
}

/** How many calls a handler's document carries inside it; the X-Ray SDK streams beyond 100, and a datagram holds 64 KB. */
export const embeddedSubsegments = 50;

const current = invocationScoped<{ parent?: Parent }>('hatchery.traceParent', () => ({}));

const newId = () => randomBytes(8).toString('hex');
const seconds = (epochMs: number) => epochMs / 1000;

/** The daemon's UDP address from AWS_XRAY_DAEMON_ADDRESS: `host:port`, or `tcp:host:port udp:host:port`. */
export function daemonAddress(value = process.env.AWS_XRAY_DAEMON_ADDRESS ?? '127.0.0.1:2000'): { host: string; port: number } {
  const udp =
    value
      .split(/\s+/)
      .find((part) => part.startsWith('udp:'))
      ?.slice(4) ?? value;
  const colon = udp.lastIndexOf(':');
  return { host: udp.slice(0, colon), port: Number(udp.slice(colon + 1)) };
}

let socket: Socket | undefined;

/**
 * Sends one document to the daemon, and never throws: a trace is worth less
 * than the call it records. A bad address throws at once; a failed send (a
 * datagram too large, a host that does not resolve) is reported to the
 * callback, and anything else to the socket's `error` listener.
 */
function send(document: SubsegmentDocument): void {
  try {
    const { host, port } = daemonAddress();
    // Loaded at the first send, not with the bundle: an invocation X-Ray does not sample never needs it.
    // Unreferenced, so that an open socket never keeps a process alive.
    socket ??= process
      .getBuiltinModule('node:dgram')
      .createSocket('udp4')
      .unref()
      .on('error', () => undefined);
    for (const datagram of datagrams(document)) socket.send(datagram, port, host, () => undefined);
  } catch {
    // Dropped, as the X-Ray SDK drops a segment it cannot send.
  }
}

/** A UDP datagram carries at most 65,507 bytes, and the daemon reads 64 KB at a time: a document with its header stays below both. */
export const maxDatagramBytes = 62 * 1024;
const datagramHeader = '{"format":"json","version":1}\n';

function written(document: unknown): string {
  try {
    return datagramHeader + JSON.stringify(document);
  } catch {
    return datagramHeader + JSON.stringify(jsonSafe(document));
  }
}

/**
 * The document in one datagram. One that would not fit (an error's message
 * of 64 KB, a large field) would be refused whole, and with it the
 * invocation's every call: its long strings are cut instead, shorter each
 * round, never as short as an id; and when even that is not enough, its calls
 * go in documents of their own, naming it as their parent, as the calls
 * beyond the embedded ones do.
 */
function datagrams(document: SubsegmentDocument): string[] {
  const whole = written(document);
  if (!exceeds(whole, maxDatagramBytes)) return [whole];
  const safe = JSON.parse(whole.slice(datagramHeader.length)) as SubsegmentDocument;
  for (const maxChars of [8_192, 2_048, 512, 128]) {
    const cut = written(shortened(safe, maxChars));
    if (!exceeds(cut, maxDatagramBytes)) return [cut];
  }
  const { subsegments = [], ...alone } = safe;
  const apart = subsegments.map((call) => ({ ...call, type: 'subsegment', trace_id: safe.trace_id, parent_id: safe.id }));
  return [alone, ...apart].map((each) => written(shortened(each, 128, 64))).filter((datagram) => !exceeds(datagram, maxDatagramBytes));
}

/**
 * How a failed call is recorded, as the X-Ray SDK records an AWS call's: a
 * 4xx an error (a failed condition, a gone connection), a throttled call a
 * throttle (429, or what the SDK's retry counts as throttling: DynamoDB's
 * ProvisionedThroughputExceededException is a 400), a 5xx a fault, and so is
 * a failure with no answer at all (a socket's, a database's).
 */
export function outcomeOf(failure: unknown): Pick<Subsegment, 'error' | 'throttle' | 'fault' | 'http' | 'cause'> {
  try {
    return readOutcome(failure);
  } catch {
    // A failure whose fields throw when read is still a fault of the call; the traced call rethrows it, not this.
    return { fault: true, cause: { exceptions: [{ id: newId(), message: '[unreadable]', type: 'Error' }] } };
  }
}

function readOutcome(failure: unknown): Pick<Subsegment, 'error' | 'throttle' | 'fault' | 'http' | 'cause'> {
  const shape = awsErrorShape(failure);
  const name = typeof shape.name === 'string' ? shape.name : 'Error';
  const message = typeof shape.message === 'string' ? shape.message : String(failure);
  const status = shape.$metadata?.httpStatusCode;
  const cause = { exceptions: [{ id: newId(), message, type: name }] };
  const http = status === undefined ? {} : { http: { response: { status } } };
  if (isThrottled(failure)) return { error: true, throttle: true, ...http, cause };
  const clientSide = status !== undefined ? status >= 400 && status < 500 : shape.$fault === 'client';
  return { ...(clientSide ? { error: true as const } : { fault: true as const }), ...http, cause };
}

/** The invocation's trace header (Root, Parent, Sampled): from Lambda's invoke store when invocations run concurrently, else from the variable Lambda sets per invocation. */
function traceHeader(): Record<string, string> {
  const header =
    (globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId(): string | undefined } } }).awslambda?.InvokeStore?.getXRayTraceId() ??
    process.env._X_AMZN_TRACE_ID ??
    '';
  // Most invocations are not sampled: they need no parsing.
  if (!header.includes('Sampled=1')) return {};
  return Object.fromEntries(header.split(';').map((field) => field.split('=', 2)));
}

let coldStart = true;

const untraced = { end: () => undefined };

/**
 * Opens the handler's subsegment for this invocation, under Lambda's facade
 * segment, when tracing is on and the request is sampled; its `end` closes
 * and sends it. Annotated as Powertools' Tracer annotated it: ColdStart, Service.
 */
export function startInvocationTrace(): { end(error?: unknown): void } {
  const wasCold = coldStart;
  coldStart = false;
  current.reset();
  const trace = tracingEnabled ? traceHeader() : {};
  if (!trace.Root || !trace.Parent || trace.Sampled !== '1') return untraced;
  const started = Date.now();
  const subsegment: Parent = { traceId: trace.Root, id: newId(), children: [] };
  current.get().parent = subsegment;
  return {
    end: (error) => {
      current.reset();
      send({
        type: 'subsegment',
        id: subsegment.id,
        trace_id: subsegment.traceId,
        parent_id: trace.Parent!,
        name: `## ${process.env._HANDLER ?? 'handler'}`,
        start_time: seconds(started),
        end_time: seconds(Date.now()),
        annotations: { ColdStart: wasCold, Service: metricsService },
        ...(error !== undefined && outcomeOf(error)),
        ...(subsegment.children.length > 0 && { subsegments: subsegment.children }),
      });
    },
  };
}

/** Runs `work` in a subsegment of the invocation's handler subsegment (a database round trip, an AWS call), recording its error. */
export function traced<T>(name: string, work: () => Promise<T>, details?: TraceDetails): Promise<T> {
  const parent = tracingEnabled ? current.get().parent : undefined;
  if (parent) return tracedIn(parent, name, work, details ?? {});
  // Most calls are not sampled: their own promise, not one more around it (a throw still becomes a rejection, as before).
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}

async function tracedIn<T>(parent: Parent, name: string, work: () => Promise<T>, details: TraceDetails): Promise<T> {
  const started = Date.now();
  const record = (extra: Partial<Subsegment> = {}) => {
    const subsegment: Subsegment = {
      id: newId(),
      name,
      start_time: seconds(started),
      end_time: seconds(Date.now()),
      namespace: details.namespace ?? 'remote',
      ...(details.aws && { aws: details.aws }),
      ...extra,
    };
    if (parent.children.length < embeddedSubsegments) parent.children.push(subsegment);
    else send({ ...subsegment, type: 'subsegment', trace_id: parent.traceId, parent_id: parent.id });
  };
  try {
    const result = await work();
    record();
    return result;
  } catch (error) {
    record(outcomeOf(error));
    throw error;
  }
}
