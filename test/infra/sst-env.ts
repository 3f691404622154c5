import { createCipheriv, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Component, resolve, type DeployedFunction } from './fakes';

export const repositoryRoot = new URL('../../', import.meta.url).pathname;

/** The source file and export name of a handler in SST's notation (`packages/functions/src/http/x.handler`). */
export function handlerSource(handler: string): { file: string; exportName: string } {
  const dot = handler.lastIndexOf('.');
  return { file: `${handler.slice(0, dot)}.ts`, exportName: handler.slice(dot + 1) };
}

/** What linked code reads as Resource.<Name>, for each linked component. */
export function linkedProperties(link: unknown): Record<string, Record<string, unknown>> {
  if (!Array.isArray(link)) return {};
  return Object.fromEntries(
    link.map((item) => {
      if (!(item instanceof Component) || !item.linkProperties()) throw new Error(`not linkable: ${String(item)}`);
      return [item.logicalName, resolve(item.linkProperties()) as Record<string, unknown>];
    }),
  );
}

const plainEnvironment = (environment: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries((resolve(environment) ?? {}) as Record<string, unknown>).map(([key, value]) => [key, String(value)]));

/**
 * The environment SST gives a Lambda function: its own variables, the app, and
 * its links sealed into a file the way SST seals them (AES-256-GCM, zero nonce,
 * tag appended), written to `keyFile`.
 */
export function lambdaEnvironment(fn: DeployedFunction, keyFile: string, overrides: Record<string, Record<string, unknown>> = {}): Record<string, string> {
  const key = randomBytes(32);
  const cipher = createCipheriv('aes-256-gcm', key, Buffer.alloc(12));
  const links = { ...linkedProperties(fn.args.link), ...overrides };
  writeFileSync(keyFile, Buffer.concat([cipher.update(JSON.stringify(links)), cipher.final(), cipher.getAuthTag()]));
  return {
    ...plainEnvironment(fn.args.environment),
    SST_RESOURCE_App: JSON.stringify({ name: 'hatchery', stage: 'test' }),
    SST_KEY: key.toString('base64'),
    SST_KEY_FILE: keyFile,
  };
}

/** The environment SST gives a container: its own variables and SST_RESOURCE_<Name> = JSON for each link. */
export function containerEnvironment(args: Record<string, unknown>): Record<string, string> {
  const links = Object.entries(linkedProperties(args.link)).map(([name, properties]) => [`SST_RESOURCE_${name}`, JSON.stringify(properties)]);
  return { ...plainEnvironment(args.environment), ...Object.fromEntries(links) };
}
