import { lookup as dnsLookup } from 'node:dns/promises';
import * as z from '@hatchery/platform/schema';
import { Webhook } from 'standardwebhooks';
import { finalities } from '../events/catalogue';
import { ipLiteral, isPublicAddress, notPublic } from './address-policy';

/** The setting that declares a stage's endpoints, as JSON: its name in every error about it. */
const setting = 'WEBHOOK_ENDPOINTS';

/** The Standard Webhooks specification's bounds on an HMAC secret's key, in bytes. */
const secretBytes = { least: 24, most: 64 };

/** What a stage's endpoints must hold to: in a deployed stage, `https://` to a public address. */
interface EndpointRules {
  /** False on the local stack, where `http://` and private, loopback and link-local addresses are allowed. */
  deployed: boolean;
  /** Every event type an endpoint may ask for. */
  knownTypes: readonly string[];
  /** The secrets of an endpoint that declares none: a deployed stage's, linked from SST secrets rather than written in the setting. */
  linkedSecrets?: (name: string) => string[];
}

const secretsSchema = z
  .array(
    z.string().check(
      z.superRefine((secret, context) => {
        const problem = secretProblem(secret);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    ),
  )
  .check(
    z.minLength(1, 'must hold one secret, or two during a rotation'),
    z.maxLength(2, 'must hold one secret, or two during a rotation'),
    z.refine((secrets) => secrets.length < 2 || secrets[0] !== secrets[1], 'must hold two different secrets'),
  );

function endpointSchema({ deployed, knownTypes }: EndpointRules) {
  return z.strictObject({
    name: z.string().check(z.regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be 1 to 40 lower-case letters, digits and hyphens, first a letter or digit')),
    url: z.string().check(
      z.superRefine((text, context) => {
        for (const message of urlProblems(text, deployed)) context.addIssue({ code: 'custom', message });
      }),
    ),
    types: z.array(z.string()).check(
      z.minLength(1, 'must name one event type at least'),
      z.superRefine((types, context) => {
        for (const [index, type] of types.entries()) {
          if (!knownTypes.includes(type))
            context.addIssue({ code: 'custom', message: `unknown event type ${JSON.stringify(type)} (known: ${knownTypes.join(', ')})`, path: [index] });
          else if (types.indexOf(type) !== index) context.addIssue({ code: 'custom', message: `${type} is named twice`, path: [index] });
        }
      }),
    ),
    finality: z.enum(finalities),
    secrets: z.optional(secretsSchema),
  });
}

/** One webhook endpoint: where its events go, which types, at what finality, and the secrets that sign them. */
export type WebhookEndpoint = Omit<z.infer<ReturnType<typeof endpointSchema>>, 'secrets'> & { secrets: string[] };

function urlProblems(text: string, deployed: boolean): string[] {
  if (!URL.canParse(text)) return ['is not a URL'];
  const url = new URL(text);
  const problems: string[] = [];
  if (deployed ? url.protocol !== 'https:' : url.protocol !== 'https:' && url.protocol !== 'http:')
    problems.push(deployed ? 'must begin with https:// in a deployed stage' : 'must begin with https:// or http://');
  // Credentials in a URL reach logs and traces as part of it; the signature is what tells a receiver who sent a request.
  if (url.username !== '' || url.password !== '') problems.push('holds a user name or password: a webhook URL carries no credentials');
  const address = ipLiteral(url);
  if (deployed && address !== undefined && !isPublicAddress(address)) problems.push(`${notPublic(address, address)}: a deployed stage refuses it`);
  return problems;
}

/** Why a secret is no Standard Webhooks HMAC secret, in words that never quote it. */
function secretProblem(secret: string): string | undefined {
  const format = `must be whsec_ and the base64 of ${secretBytes.least} to ${secretBytes.most} random bytes`;
  if (!secret.startsWith('whsec_')) return format;
  try {
    new Webhook(secret);
  } catch {
    return format;
  }
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
  return bytes < secretBytes.least || bytes > secretBytes.most ? `${format}, not ${bytes}` : undefined;
}

/** One error for every endpoint that breaks a rule, a line each. */
function refused(problems: readonly string[]): Error {
  return new Error(`${setting} breaks these rules:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
}

/** How an endpoint is named in an error: by its name when it has one. */
function label(endpoint: unknown, index: number): string {
  const name = (endpoint as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name !== '' ? `endpoint ${JSON.stringify(name.slice(0, 40))}` : `endpoint #${index + 1}`;
}

/**
 * The endpoints a stage declares in WEBHOOK_ENDPOINTS, a JSON array; none when it is unset. Throws one error that
 * names each broken endpoint and every rule it breaks, and quotes no secret. A host name's addresses are checked by
 * `checkEndpointAddresses`, which resolves it.
 */
export function parseEndpoints(json: string | undefined, rules: EndpointRules): WebhookEndpoint[] {
  if (json === undefined || json.trim() === '') return [];
  let declared: unknown;
  try {
    declared = JSON.parse(json);
  } catch {
    // JSON.parse's message quotes the text near the fault, which may be a secret.
    throw new Error(`${setting} is not valid JSON`);
  }
  if (!Array.isArray(declared)) throw new Error(`${setting} must be a JSON array of endpoints`);
  const schema = endpointSchema(rules);
  const endpoints: WebhookEndpoint[] = [];
  const problems: string[] = [];
  const names = declared.map((endpoint) => (endpoint as { name?: unknown } | null)?.name);
  for (const [index, endpoint] of declared.entries()) {
    const linked = typeof names[index] === 'string' ? rules.linkedSecrets?.(names[index]) : undefined;
    const withSecrets = endpoint && typeof endpoint === 'object' && !('secrets' in endpoint) && linked?.length ? { ...endpoint, secrets: linked } : endpoint;
    const parsed = schema.safeParse(withSecrets);
    const broken = parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.') || 'the endpoint'}: ${issue.message}`);
    if (typeof names[index] === 'string' && names.indexOf(names[index]) !== index) broken.push('name: an endpoint before it has the same name');
    if (parsed.success && !parsed.data.secrets) broken.push('secrets: none declared, and no secret linked for it');
    if (broken.length > 0) problems.push(`${label(endpoint, index)}: ${broken.join('; ')}`);
    else if (parsed.success && parsed.data.secrets) endpoints.push({ ...parsed.data, secrets: parsed.data.secrets });
  }
  if (problems.length > 0) throw refused(problems);
  return endpoints;
}

/** All the addresses a host name resolves to. */
type ResolveHost = (hostname: string) => Promise<readonly { address: string }[]>;

const resolveHost: ResolveHost = (hostname) => dnsLookup(hostname, { all: true });

/**
 * In a deployed stage, refuses an endpoint whose host name resolves to any address that is not public (`localhost`,
 * an internal name), with one error naming each. A name that does not resolve is not refused here: a receiver's DNS
 * outage must not stop a start, and every delivery checks the addresses it connects to again.
 */
export async function checkEndpointAddresses(
  endpoints: readonly Pick<WebhookEndpoint, 'name' | 'url'>[],
  { deployed, lookup = resolveHost }: { deployed: boolean; lookup?: ResolveHost },
): Promise<void> {
  if (!deployed) return;
  const problems = await Promise.all(
    endpoints.map(async ({ name, url }, index) => {
      const { hostname } = new URL(url);
      if (ipLiteral(new URL(url)) !== undefined) return [];
      const addresses = await lookup(hostname).catch(() => []);
      const refusedAddress = addresses.find(({ address }) => !isPublicAddress(address));
      return refusedAddress ? [`${label({ name }, index)}: url: ${notPublic(hostname, refusedAddress.address)}: a deployed stage refuses it`] : [];
    }),
  );
  if (problems.flat().length > 0) throw refused(problems.flat());
}
