/**
 * Derives test/deploy/replace-forcing.json: for each Pulumi type of
 * infra/stateful.ts, the inputs whose change makes the provider replace the
 * resource, read from the bridged Terraform provider's own schema source at a
 * pinned commit.
 *
 *   npx tsx test/deploy/replace-forcing/derive.ts \
 *     --source aws=<git-dir of hashicorp/terraform-provider-aws>@<commit> \
 *     --source random=<git-dir of hashicorp/terraform-provider-random>@<commit>
 *
 * Each git dir may be a bare mirror or a clone; files are read with
 * `git --git-dir <dir> show <commit>:<path>`.
 *
 * Where no checkout can be had, a provider's files may come from a folder
 * instead: `--files aws=<dir>`, the folder mirroring the repository's paths
 * and holding a manifest.json that says where each file was read:
 *
 *   { "repo": "hashicorp/terraform-provider-aws",
 *     "files": { "<path>": { "commit": "<40 hex>", "chars": <the file's length at that commit> } } }
 *
 * A saved file shorter than `chars` must be that file's beginning (say, up to
 * the end of the resource function); the record then names it "the first N
 * of M characters", and a CustomizeDiff outside those N goes unseen. Each file
 * has its own commit, and each type's source names the one read. A type whose
 * file is not in the folder, or whose schema this parser does not read, keeps
 * its inputs, is marked `unverified` with the reason in `notDerived`, and the
 * script exits non-zero after writing the record. The commit to pin is the one the
 * installed bridge builds from: @pulumi/random's upstream is the
 * terraform-provider-random pseudo-version in pulumi-random's
 * provider/shim/go.mod at the matching tag; @pulumi/aws's is pulumi-aws's
 * `upstream` submodule at the matching tag (pulumi-aws also applies its
 * patches/ to it, which this script does not read). A provider given no
 * --source keeps its types' entries from the current JSON as they are.
 *
 * What counts as replace-forcing: a top-level attribute with `ForceNew: true`
 * (SDKv2) or a RequiresReplace* plan modifier (plugin framework), or one whose
 * nested block holds such an attribute, since a change inside it replaces the
 * whole resource too; plus attributes a CustomizeDiff forces new by name
 * (customdiff.ForceNewIf*, diff.ForceNew), which replace only under a
 * condition. Where a schema is built in a way this parser does not read, it
 * stops with an error rather than guess.
 *
 * Terraform names become Pulumi names as the bridge makes them (camelCase, a
 * list or set without MaxItems 1 pluralized), checked against the installed
 * SDK's Args interface; the few that pulumi-aws renames in its own resource
 * mapping are listed in `renames` with where that mapping says so.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statefulResources } from '../../../infra/stateful';
import { argsOf } from './sdk-args';

const here = new URL('.', import.meta.url).pathname;
const outFile = join(here, '..', 'replace-forcing.json');

type Provider = 'aws' | 'random';
interface Origin {
  provider: Provider;
  repo: string;
  path: string;
  /** SDKv2: the function returning the *schema.Resource; framework: the function or method holding `Attributes:`. */
  fn: string;
  framework?: boolean;
}

/** Where each stateful type's schema lives upstream. */
const origins: Record<string, Origin> = {
  'aws:rds/instance:Instance': { provider: 'aws', repo: 'hashicorp/terraform-provider-aws', path: 'internal/service/rds/instance.go', fn: 'resourceInstance' },
  'aws:rds/parameterGroup:ParameterGroup': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/rds/parameter_group.go',
    fn: 'resourceParameterGroup',
  },
  'aws:rds/subnetGroup:SubnetGroup': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/rds/subnet_group.go',
    fn: 'resourceSubnetGroup',
  },
  'aws:rds/proxy:Proxy': { provider: 'aws', repo: 'hashicorp/terraform-provider-aws', path: 'internal/service/rds/proxy.go', fn: 'resourceProxy' },
  'aws:rds/proxyDefaultTargetGroup:ProxyDefaultTargetGroup': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/rds/proxy_default_target_group.go',
    fn: 'resourceProxyDefaultTargetGroup',
  },
  'aws:rds/proxyTarget:ProxyTarget': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/rds/proxy_target.go',
    fn: 'resourceProxyTarget',
  },
  'aws:secretsmanager/secret:Secret': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/secretsmanager/secret.go',
    fn: 'resourceSecret',
  },
  'aws:secretsmanager/secretVersion:SecretVersion': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/secretsmanager/secret_version.go',
    fn: 'resourceSecretVersion',
  },
  'aws:dynamodb/table:Table': { provider: 'aws', repo: 'hashicorp/terraform-provider-aws', path: 'internal/service/dynamodb/table.go', fn: 'resourceTable' },
  'aws:cloudwatch/logGroup:LogGroup': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/logs/group.go',
    fn: 'resourceGroup',
  },
  'aws:ec2/eip:Eip': { provider: 'aws', repo: 'hashicorp/terraform-provider-aws', path: 'internal/service/ec2/ec2_eip.go', fn: 'resourceEIP' },
  'aws:cloudfront/distribution:Distribution': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/cloudfront/distribution.go',
    fn: 'resourceDistribution',
  },
  'aws:sns/topicSubscription:TopicSubscription': {
    provider: 'aws',
    repo: 'hashicorp/terraform-provider-aws',
    path: 'internal/service/sns/topic_subscription.go',
    fn: 'resourceTopicSubscription',
  },
  'random:index/randomPassword:RandomPassword': {
    provider: 'random',
    repo: 'hashicorp/terraform-provider-random',
    path: 'internal/provider/resource_password.go',
    fn: 'passwordSchemaV3',
    framework: true,
  },
  'random:index/randomId:RandomId': {
    provider: 'random',
    repo: 'hashicorp/terraform-provider-random',
    path: 'internal/provider/resource_id.go',
    fn: 'Schema',
    framework: true,
  },
};

/** Terraform attributes that pulumi-aws's resource mapping (provider/resources.go, `Fields`) gives another name. */
const renames: Record<string, Record<string, string>> = {
  'aws:sns/topicSubscription:TopicSubscription': { topic_arn: 'topic' },
};

// ---- reading sources ----------------------------------------------------------------------------

type Source =
  | { kind: 'git'; gitDir: string; commit: string }
  | { kind: 'files'; dir: string; repo: string; files: Record<string, { commit: string; chars: number }> };

const usage = 'usage: --source <aws|random>=<git-dir>@<commit> | --files <aws|random>=<dir with manifest.json>';

function parseArgs(argv: string[]): Partial<Record<Provider, Source>> {
  const sources: Partial<Record<Provider, Source>> = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i] ?? '';
    if (flag === '--source') {
      const match = /^(aws|random)=(.+)@([0-9a-f]{7,40})$/.exec(value);
      if (!match) throw new Error(`--source wants <aws|random>=<git-dir>@<commit>, got ${value}`);
      sources[match[1] as Provider] = { kind: 'git', gitDir: match[2]!, commit: match[3]! };
    } else if (flag === '--files') {
      const match = /^(aws|random)=(.+)$/.exec(value);
      if (!match) throw new Error(`--files wants <aws|random>=<dir>, got ${value}`);
      const manifest = JSON.parse(readFileSync(join(match[2]!, 'manifest.json'), 'utf8')) as {
        repo: string;
        files: Record<string, { commit: string; chars: number }>;
      };
      for (const [path, { commit, chars }] of Object.entries(manifest.files))
        if (!/^[0-9a-f]{40}$/.test(commit) || !Number.isInteger(chars))
          throw new Error(`${match[2]}/manifest.json: ${path} wants a 40-hex commit and its length in chars`);
      sources[match[1] as Provider] = { kind: 'files', dir: match[2]!, repo: manifest.repo, files: manifest.files };
    } else throw new Error(`unknown argument ${flag}; ${usage}`);
  }
  return sources;
}

interface Read {
  text: string;
  /** Where the text was read, as the record names it: `<path> @ <commit>`, and which part if not all of it. */
  at: string;
}

function gitShow(source: Extract<Source, { kind: 'git' }>, path: string): string {
  return execFileSync('git', ['--git-dir', source.gitDir, 'show', `${source.commit}:${path}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The full commit id, so the record names what a reviewer can check out. */
function resolveCommit(source: Extract<Source, { kind: 'git' }>): string {
  return execFileSync('git', ['--git-dir', source.gitDir, 'rev-parse', `${source.commit}^{commit}`], { encoding: 'utf8' }).trim();
}

function readSource(source: Source, repo: string, path: string): Read {
  if (source.kind === 'git') return { text: gitShow(source, path), at: `${path} @ ${resolveCommit(source)}` };
  if (source.repo !== repo) throw new Error(`${source.dir}/manifest.json is of ${source.repo}, not ${repo}`);
  const entry = source.files[path];
  if (!entry) throw new Error(`${path} is not in ${source.dir}/manifest.json`);
  const text = readFileSync(join(source.dir, path), 'utf8');
  if (text.length > entry.chars)
    throw new Error(`${source.dir}/${path} has ${text.length} characters, more than the ${entry.chars} the manifest says the file has`);
  const part = text.length < entry.chars ? ` (the first ${text.length} of its ${entry.chars} characters)` : '';
  return { text, at: `${path} @ ${entry.commit}${part}` };
}

// ---- a small Go reader: braces, strings and comments, no more ------------------------------------

/** The index just past the brace that closes the one at `open`, skipping Go strings, runes and comments. */
function closing(src: string, open: number): number {
  const pairs: Record<string, string> = { '{': '}', '(': ')', '[': ']' };
  const stack: string[] = [];
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i);
    else if (c === '/' && src[i + 1] === '*') i = src.indexOf('*/', i) + 1;
    else if (c === '"' || c === "'") {
      for (i++; src[i] !== c; i++) if (src[i] === '\\') i++;
    } else if (c === '`') i = src.indexOf('`', i + 1);
    else if (c in pairs) stack.push(pairs[c]!);
    else if (c === '}' || c === ')' || c === ']') {
      if (stack.pop() !== c) throw new Error(`unbalanced ${c} at ${i}`);
      if (stack.length === 0) return i + 1;
    }
    if (i < 0) break;
  }
  throw new Error(`no closing brace for the one at ${open}`);
}

/** The body of `func name(` or a method `func (r *T) name(` in a Go file. */
function functionBody(src: string, name: string, where: string): string {
  const match = new RegExp(`^func (?:\\([^)]*\\) )?${name}\\(`, 'm').exec(src);
  if (!match) throw new Error(`${where}: no func ${name}`);
  const open = src.indexOf('{\n', match.index);
  return src.slice(open, closing(src, open));
}

/** The top-level `key: value` entries of a Go composite literal body (from its `{`). */
function entries(literal: string): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  let i = 1;
  const end = closing(literal, 0) - 1;
  while (i < end) {
    const rest = literal.slice(i, end);
    const skip = /^(?:\s|,|\/\/[^\n]*)+/.exec(rest)?.[0].length ?? 0;
    i += skip;
    if (i >= end) break;
    const key = /^("(?:[^"\\]|\\.)*"|[\w.]+)\s*:\s*/.exec(literal.slice(i, end));
    if (!key) throw new Error(`cannot read a map key at: ${literal.slice(i, i + 80)}`);
    i += key[0].length;
    const start = i;
    // A value runs to the comma at this depth; braces, calls and strings inside it are skipped whole.
    while (i < end && literal[i] !== ',') {
      const c = literal[i]!;
      if ('{(["`\''.includes(c)) {
        if (c === '"' || c === "'") {
          for (i++; literal[i] !== c; i++) if (literal[i] === '\\') i++;
          i++;
        } else if (c === '`') i = literal.indexOf('`', i + 1) + 1;
        else i = closing(literal, i);
      } else i++;
    }
    out.push({ key: key[1]!, value: literal.slice(start, i).trim() });
  }
  return out;
}

/** A schema key as Terraform spells it: a string literal, or a names.Attr* constant of the same commit. */
function keyName(key: string, attrConsts: Map<string, string>, where: string): string {
  if (key.startsWith('"')) return JSON.parse(key) as string;
  const name = attrConsts.get(key.replace(/^names\./, ''));
  if (!name)
    throw new Error(
      `${where}: schema key ${key} is not a string nor a names.Attr constant of the names files read (the same commit from git; the folder's names/attr_consts*.go)`,
    );
  return name;
}

interface Attribute {
  name: string;
  forcing: boolean;
  /** A list or set block the bridge names in the plural. */
  plural: boolean;
}

const forceNew = /\bForceNew:\s*true\b/;

/** The resource function as this file spells it: releases differ in whether it is exported (resourceX or ResourceX). */
function sdkv2Function(src: string, fn: string): string {
  const exported = `${fn[0]!.toUpperCase()}${fn.slice(1)}`;
  return new RegExp(`^func ${exported}\\(`, 'm').test(src) ? exported : fn;
}

/** SDKv2: the top-level attributes of the resource's Schema map. */
function sdkv2Attributes(src: string, origin: Origin, attrConsts: Map<string, string>, where: string): Attribute[] {
  const body = functionBody(src, sdkv2Function(src, origin.fn), where);
  let literal: string;
  const inline = /\bSchema:\s*map\[string\]\*schema\.Schema\{/.exec(body);
  const named = /\bSchema:\s*(\w+),/.exec(body);
  if (inline) {
    const open = body.indexOf('{', inline.index + 'Schema:'.length);
    literal = body.slice(open, closing(body, open));
  } else if (named) {
    // A package-level variable of the same file (aws_sns_topic_subscription keeps its schema in one).
    const decl = new RegExp(`\\b${named[1]}\\s*=\\s*map\\[string\\]\\*schema\\.Schema\\{`).exec(src);
    if (!decl) throw new Error(`${where}: Schema is ${named[1]}, which this file does not declare as a map literal`);
    const open = src.indexOf('{', decl.index + decl[0].length - 1);
    literal = src.slice(open, closing(src, open));
  } else throw new Error(`${where}: ${origin.fn} builds its Schema in a way this parser does not read`);

  return entries(literal).map(({ key, value }) => {
    const name = keyName(key, attrConsts, where);
    if (!value.startsWith('{')) {
      // Shared helpers: tags maps are never replace-forcing unless the helper says so by name.
      if (/^tftags\.TagsSchema(?:Computed|TrulyComputed)?\(\)$/.test(value)) return { name, forcing: false, plural: false };
      if (/^tftags\.TagsSchemaForceNew\(\)$/.test(value)) return { name, forcing: true, plural: false };
      throw new Error(`${where}: ${name} is built by ${value.slice(0, 60)}, which this parser does not read`);
    }
    const nestedElsewhere = /\bElem:\s*(?!&schema\.)([\w.]+)/.exec(value);
    if (nestedElsewhere) throw new Error(`${where}: ${name}'s Elem is ${nestedElsewhere[1]}, defined elsewhere`);
    return {
      name,
      forcing: forceNew.test(value),
      plural: /\bType:\s*schema\.Type(?:List|Set)\b/.test(value) && !/\bMaxItems:\s*1\b/.test(value) && /\bElem:\s*&schema\.Resource\{/.test(value),
    };
  });
}

/** Plugin framework: the attributes of `Attributes: map[string]schema.Attribute{` in the named function or method. */
function frameworkAttributes(src: string, origin: Origin, where: string): Attribute[] {
  const body = functionBody(src, origin.fn, where);
  const at = /\bAttributes:\s*map\[string\]schema\.Attribute\{/.exec(body);
  if (!at) throw new Error(`${where}: ${origin.fn} has no Attributes map literal`);
  if (/\bBlocks:/.test(body)) throw new Error(`${where}: ${origin.fn} has Blocks, which this parser does not read`);
  const open = body.indexOf('{', at.index + 'Attributes:'.length);
  return entries(body.slice(open, closing(body, open))).map(({ key, value }) => {
    if (!key.startsWith('"')) throw new Error(`${where}: attribute key ${key} is not a string literal`);
    return { name: JSON.parse(key) as string, forcing: /RequiresReplace/.test(value), plural: false };
  });
}

/** Attributes a CustomizeDiff forces new by name: they replace only when its condition holds. */
function conditionallyForcing(src: string, attrConsts: Map<string, string>, where: string): string[] {
  const names = new Set<string>();
  for (const match of src.matchAll(/(?:customdiff\.ForceNewIf(?:Change)?|\.ForceNew)\(\s*("[^"]+"|names\.\w+)/g))
    names.add(keyName(match[1]!, attrConsts, where));
  return [...names];
}

// ---- Pulumi names ------------------------------------------------------------------------------

const camel = (snake: string) => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The bridge's plural for a list or set block (go-openapi/inflect's rules, for the endings these schemas use). */
function plural(word: string): string {
  if (/(?:s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (word.endsWith('Index')) return `${word.slice(0, -'Index'.length)}Indexes`;
  return `${word}s`;
}

function pulumiName(type: string, attribute: Attribute, args: string[]): string | undefined {
  const renamed = renames[type]?.[attribute.name];
  if (renamed) return args.includes(renamed) ? renamed : undefined;
  const name = camel(attribute.name);
  const candidate = attribute.plural && args.includes(plural(name)) ? plural(name) : name;
  return args.includes(candidate) ? candidate : undefined;
}

// ---- the record --------------------------------------------------------------------------------

export interface ReplaceForcingEntry {
  source: string;
  inputs: string[];
  /** Replace-forcing only when a CustomizeDiff's condition holds. */
  conditionally?: string[];
  /** Replace-forcing attributes of the source that the installed SDK does not take as inputs (computed-only, or not in this SDK version). */
  notInSdk?: string[];
  /** Not derived: the inputs are kept from the previous record, and `notDerived` (when derive.ts wrote it) says why. */
  unverified?: true;
  notDerived?: string;
}

export interface ReplaceForcingRecord {
  '//': string;
  types: Record<string, ReplaceForcingEntry>;
}

const note =
  'Inputs whose change makes the provider replace the resource (delete it, create another), as the Pulumi names of the installed SDK’s Args, for every type of infra/stateful.ts. The Pulumi providers are bridged from Terraform’s, which decides a replacement by ForceNew (SDKv2) or a RequiresReplace plan modifier (plugin framework); “inputs” are the top-level attributes so marked, or holding a nested attribute so marked, in the schema source named by “source”; “conditionally” are those a CustomizeDiff forces new under a condition; “notInSdk” are replace-forcing attributes the installed SDK does not take. Regenerate with test/deploy/replace-forcing/derive.ts (its header says how), never by hand. test/deploy/stateful.test.ts checks every type is here and every name against the installed SDK. Every other recorded input is compared too: this list only says which changes replace. Where the AWS entries come from: no checkout of hashicorp/terraform-provider-aws could be had, so they are derived (--files aws=<dir>) from copies of single files that a code index of public repositories holds, each file at the commit its “source” names; the index lists one commit per file and does not date it, so these are not known to be the newest nor the upstream of the installed @pulumi/aws (7.20.0). An entry marked “unverified” was not derived: “notDerived” says why, and its inputs are the earlier hand-read list. Re-run with --source aws=<git-dir>@<commit of pulumi-aws’s upstream submodule> when a checkout is at hand.';

function derive(type: string, origin: Origin, source: Source, names: Names): ReplaceForcingEntry {
  const { text: src, at } = readSource(source, origin.repo, origin.path);
  const where = `${origin.repo} ${at}`;
  const attributes = origin.framework ? frameworkAttributes(src, origin, where) : sdkv2Attributes(src, origin, names.consts, where);
  if (attributes.length < 2) throw new Error(`${where}: read only ${attributes.length} attributes, which cannot be the whole schema`);
  const args = argsOf(type);
  const inputs: string[] = [];
  const notInSdk: string[] = [];
  for (const attribute of attributes.filter((a) => a.forcing)) {
    const name = pulumiName(type, attribute, args);
    if (name) inputs.push(name);
    else notInSdk.push(attribute.name);
  }
  const conditionally = origin.framework
    ? []
    : conditionallyForcing(src, names.consts, where).flatMap((name) => {
        const attribute = attributes.find((a) => a.name === name);
        const pulumi = attribute && pulumiName(type, attribute, args);
        return pulumi && !inputs.includes(pulumi) ? [pulumi] : [];
      });
  // Where the file reads its keys from names.Attr* and those come from another commit (a folder's files each have their own), say which.
  const namesAt = source.kind === 'files' && /\bnames\.Attr\w/.test(src) ? `; names.Attr* from ${names.at}` : '';
  return {
    source: `${where}, ${origin.framework ? origin.fn : sdkv2Function(src, origin.fn)}()${namesAt}`,
    inputs: inputs.sort(),
    ...(conditionally.length ? { conditionally: conditionally.sort() } : {}),
    ...(notInSdk.length ? { notInSdk: notInSdk.sort() } : {}),
  };
}

interface Names {
  consts: Map<string, string>;
  /** Which files they were read from, for the record. */
  at: string;
}

/** names.Attr* constants of terraform-provider-aws (schema keys use them): at the same commit from git, or the folder's copies. */
function attrConstants(source: Source | undefined, provider: Provider): Names {
  const consts = new Map<string, string>();
  if (!source || provider !== 'aws') return { consts, at: '' };
  // The constants moved into a generated file in later releases; earlier ones keep the few they have in attr_consts.go.
  const read = ['names/attr_consts_gen.go', 'names/attr_consts.go'].flatMap((path) => {
    if (source.kind === 'files' && !source.files[path]) return [];
    try {
      return [readSource(source, 'hashicorp/terraform-provider-aws', path)];
    } catch {
      return [];
    }
  });
  for (const { text } of read) for (const match of text.matchAll(/^\s*(Attr\w+)\s*=\s*"([^"]+)"/gm)) consts.set(match[1]!, match[2]!);
  return { consts, at: read.map((r) => r.at).join(', ') || 'no names file' };
}

function main(): void {
  const sources = parseArgs(process.argv.slice(2));
  if (Object.keys(sources).length === 0) throw new Error(`give at least one source; ${usage}`);
  const previous = JSON.parse(readFileSync(outFile, 'utf8')) as ReplaceForcingRecord;
  const names = { aws: attrConstants(sources.aws, 'aws'), random: attrConstants(undefined, 'random') };
  const types: Record<string, ReplaceForcingEntry> = {};
  const failures: string[] = [];
  for (const type of Object.keys(statefulResources).sort()) {
    const origin = origins[type];
    if (!origin) throw new Error(`${type} is stateful (infra/stateful.ts) but has no origin here: add where its schema lives`);
    const source = sources[origin.provider];
    const kept = previous.types[type];
    if (source) {
      try {
        types[type] = derive(type, origin, source, names[origin.provider]);
      } catch (error) {
        // One type's schema this parser cannot read leaves that type's entry as it was, flagged with why; the others are still derived.
        const reason = error instanceof Error ? error.message : String(error);
        failures.push(`${type}: ${reason}`);
        const keptFrom = kept?.source.replace(/^NOT DERIVED from .*?; the inputs are the previous entry’s: /, '') ?? 'none';
        types[type] = {
          source: `NOT DERIVED from ${origin.repo} ${origin.path}; the inputs are the previous entry’s: ${keptFrom}`,
          inputs: kept?.inputs ?? [],
          unverified: true,
          notDerived: reason,
        };
      }
    } else if (kept) types[type] = kept;
    else throw new Error(`${type}: no entry to keep and no source for ${origin.provider} to derive one`);
    console.log(`${type}: ${types[type]!.inputs.join(', ') || '(none)'}${source ? (types[type]!.unverified ? ' (NOT DERIVED)' : '') : ' (kept)'}`);
  }
  writeFileSync(outFile, `${JSON.stringify({ '//': note, types } satisfies ReplaceForcingRecord, null, 2)}\n`);
  if (failures.length) {
    console.error(`\n${failures.length} type(s) not derived, their entries kept and flagged unverified:\n${failures.join('\n')}`);
    process.exitCode = 1;
  }
}

main();
