/**
 * The upgrade check (docs/deploying.md, "Upgrading"): the stateful resources
 * of each deploy variant, as test/deploy/stateful-record.json records them,
 * against what today's config deploys. A recorded URN that is gone, or a
 * recorded input that changed, is a deploy that would delete or replace what
 * holds users' data; a stateful resource the record lacks must be added to it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { statefulResources } from '../../infra/stateful';
import type { DeployResult, RecordedResource } from './sst/deploy';
import { isSecret } from './sst/deployed';

export const recordFile = new URL('./stateful-record.json', import.meta.url).pathname;
const replaceForcing = (JSON.parse(readFileSync(new URL('./replace-forcing.json', import.meta.url), 'utf8')) as { types: Record<string, { inputs: string[] }> })
  .types;

/** Inputs left out of the record: tags hold nothing, and a distribution's behaviours change in place with every route. */
const unrecordedInputs: Record<string, 'all' | string[]> = { '*': ['tags', 'tagsAll'], 'aws:cloudfront/distribution:Distribution': 'all' };

export interface RecordedStateful {
  urn: string;
  type: string;
  /** The deploy variants (test/deploy/deploy.test.ts) that create it with these inputs. */
  variants: string[];
  inputs: Record<string, unknown>;
}

export interface StatefulRecord {
  '//': string;
  resources: RecordedStateful[];
}

/** The characters of SST's random name suffixes (physicalName in SST's naming.ts). */
const autonameSuffix = /-[abcdefhkmnorstuvwxz]{8}(?=$|[^A-Za-z0-9])/g;

/**
 * A value as the record keeps it: the stage and SST's random autoname
 * suffixes (which a real upgrade keeps from its state) replaced by
 * placeholders, and secrets by a placeholder.
 */
function normalized(value: unknown, app: string, stage: string): unknown {
  if (isSecret(value)) return '<secret>';
  if (typeof value === 'string')
    return value
      .replaceAll(`urn:pulumi:${stage}::`, 'urn:pulumi:<stage>::')
      .replaceAll(`${app}-${stage}-`, `${app}-<stage>-`)
      .replace(autonameSuffix, '-<random>');
  if (Array.isArray(value)) return value.map((item) => normalized(item, app, stage));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, normalized(item, app, stage)]));
  return value;
}

function recordedInputs(resource: RecordedResource): Record<string, unknown> {
  const left = unrecordedInputs[resource.type] ?? [];
  if (left === 'all') return {};
  const leftOut = new Set([...(unrecordedInputs['*'] as string[]), ...left]);
  return Object.fromEntries(Object.entries(resource.inputs).filter(([key]) => !leftOut.has(key)));
}

/** The stateful resources one deploy created, normalized as the record keeps them. */
export function statefulOf(result: DeployResult): Omit<RecordedStateful, 'variants'>[] {
  const app = String(result.app.name);
  const stage = String(result.app.stage);
  return result.resources
    .filter((resource) => resource.type in statefulResources)
    .map((resource) => {
      if (!resource.urn) throw new Error(`${resource.type} ${resource.name}: the deploy recorded no URN`);
      return {
        urn: normalized(resource.urn, app, stage) as string,
        type: resource.type,
        inputs: normalized(recordedInputs(resource), app, stage) as Record<string, unknown>,
      };
    })
    .sort((a, b) => a.urn.localeCompare(b.urn));
}

/** The record of these deploys: one entry per URN and set of inputs, naming the variants that have it. */
export function buildRecord(deploys: Record<string, DeployResult>): StatefulRecord {
  const entries: RecordedStateful[] = [];
  for (const [variant, result] of Object.entries(deploys)) {
    for (const resource of statefulOf(result)) {
      const same = entries.find((entry) => entry.urn === resource.urn && isDeepStrictEqual(entry.inputs, resource.inputs));
      if (same) same.variants.push(variant);
      else entries.push({ ...resource, variants: [variant] });
    }
  }
  return {
    '//': 'The stateful resources of every deploy variant of test/deploy/deploy.test.ts (infra/stateful.ts names the types), with their inputs. Reviewed like code: a change here is a change to what holds users’ data. Regenerate with UPDATE_STATEFUL_RECORD=1 (docs/deploying.md, "Upgrading").',
    resources: entries.sort((a, b) => a.urn.localeCompare(b.urn) || a.variants[0]!.localeCompare(b.variants[0]!)),
  };
}

export function readRecord(): StatefulRecord {
  return JSON.parse(readFileSync(recordFile, 'utf8')) as StatefulRecord;
}

export function writeRecord(record: StatefulRecord): void {
  writeFileSync(recordFile, `${JSON.stringify(record, null, 2)}\n`);
}

const shown = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));
const nameOf = (urn: string) => urn.slice(urn.lastIndexOf('::') + 2);

/**
 * What today's deploy of `variant` would lose against the record, one
 * sentence per finding, each naming the resource and what it holds.
 */
export function dataLosingChanges(record: StatefulRecord, variant: string, result: DeployResult): string[] {
  const recorded = record.resources.filter((entry) => entry.variants.includes(variant));
  const current = new Map(statefulOf(result).map((resource) => [resource.urn, resource]));
  const findings: string[] = [];
  for (const entry of recorded) {
    const now = current.get(entry.urn);
    const holds = statefulResources[entry.type];
    const what = `${entry.type} ${nameOf(entry.urn)}`;
    if (!now) {
      findings.push(`${variant}: ${what} is gone (its URN ${entry.urn} is no longer deployed): the deploy deletes it, and with it ${holds}.`);
      continue;
    }
    const forcing = replaceForcing[entry.type]?.inputs ?? [];
    for (const input of [...new Set([...Object.keys(entry.inputs), ...Object.keys(now.inputs)])].sort()) {
      if (isDeepStrictEqual(entry.inputs[input], now.inputs[input])) continue;
      const change = `${variant}: ${what}'s ${input} changes from ${shown(entry.inputs[input])} to ${shown(now.inputs[input])}`;
      findings.push(
        forcing.includes(input)
          ? `${change}: the AWS provider replaces the resource on this input, deleting ${holds}.`
          : `${change}: review what this does to ${holds}, then record it.`,
      );
    }
  }
  const known = new Set(recorded.map((entry) => entry.urn));
  for (const [urn, resource] of current)
    if (!known.has(urn))
      findings.push(`${variant}: ${resource.type} ${nameOf(urn)} holds ${statefulResources[resource.type]} and is not in the record: record it.`);
  return findings;
}
