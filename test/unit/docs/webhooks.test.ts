import { describe, expect, it } from 'vitest';
import { allEventTypes, eventCatalogue, eventTypes, type PayloadField } from '@hatchery/core/events/catalogue';
import { eventSchema } from '@hatchery/core/events/schema';
import type { WireType } from '@hatchery/core/query/read-model';
import { deliveryLimits } from '@hatchery/core/webhooks/delivery';
import { parseEndpoints } from '@hatchery/core/webhooks/endpoints';
import { commandLines, docBlock, linesNotInFile, parseDoc, where } from '../../support/docs';

/**
 * docs/webhooks.md against what it documents: its catalogue against the one declaration (catalogue.ts), its
 * envelope against the events' schema, its examples of events and endpoints against the parsers that take them, and
 * its receiver snippet against examples/webhook-receiver.mjs (which test/stack/local/webhook-receiver.test.ts runs).
 */
const page = parseDoc('docs/webhooks.md');
const lines = page.text.split('\n');

/** How the page words each payload field's type. */
const typeWords: Record<WireType, string> = {
  bigint: 'whole number (string)',
  address: 'address',
  string: 'string',
  int: 'integer',
  boolean: 'boolean',
};

/** The lines of a section: from its heading to the next heading of its level or above. */
function section(text: string, level: number): string[] {
  const start = page.headings.find((heading) => heading.text === text && heading.level === level);
  if (!start) throw new Error(`docs/webhooks.md has no heading ${'#'.repeat(level)} ${text}`);
  const end = page.headings.find((heading) => heading.line > start.line && heading.level <= level);
  return lines.slice(start.line, end ? end.line - 1 : undefined);
}

/** A markdown table's rows, cells trimmed, its header and separator left out. */
const tableRows = (section: string[]) =>
  section
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );

describe('docs/webhooks.md', () => {
  it('gives each event type of the catalogue, in its order, with its description, entity and every payload field’s type and description', () => {
    const documented = page.headings.filter((heading) => heading.level === 3 && /^[a-z]+\.[a-z]+$/.test(heading.text)).map((heading) => heading.text);
    expect(documented).toEqual(eventTypes);
    for (const type of eventTypes) {
      const declared = eventCatalogue[type];
      const text = section(type, 3);
      expect(text.join('\n'), type).toContain(`${declared.description} Entity: ${declared.entity}.`);
      expect(tableRows(text), type).toEqual(
        Object.entries(declared.payload as Readonly<Record<string, PayloadField>>).map(([name, field]) => [
          `\`${name}\``,
          `${typeWords[field.type]}${field.optional ? ', optional' : ''}`,
          field.description,
        ]),
      );
    }
    const reverted = section('Retractions', 3).join(' ');
    for (const type of allEventTypes.filter((each) => each.endsWith('.reverted'))) expect(reverted).toContain(`\`${type}\``);
  });

  it('its envelope names every field an event has, and its examples are events the schema takes as they are', () => {
    const options = (eventSchema as unknown as { _zod: { def: { options: { _zod: { def: { shape: object } } }[] } } })._zod.def.options;
    const fields = new Set(options.flatMap((option) => Object.keys(option._zod.def.shape)));
    expect(
      tableRows(section('The event envelope', 2))
        .map(([field]) => field)
        .sort(),
    ).toEqual([...fields].map((field) => `\`${field}\``).sort());
    for (const block of [docBlock('event-example'), docBlock('reverted-example')]) {
      const shown: unknown = JSON.parse(block.text);
      expect(eventSchema.parse(shown), where(block)).toEqual(shown);
    }
  });

  it('its endpoint is one the local stack takes and a deployed stage refuses, and the one its walkthrough declares', () => {
    const json = docBlock('webhook-endpoints').text;
    const rules = { knownTypes: allEventTypes };
    expect(parseEndpoints(json, { ...rules, deployed: false })).toEqual(JSON.parse(json));
    expect(() => parseEndpoints(json, { ...rules, deployed: true })).toThrow(/url: .*https:\/\/.*\n?.*127\.0\.0\.1 is not a public address/s);
    const [, start] = commandLines(docBlock('webhook-try-it'));
    const declared = /^WEBHOOK_ENDPOINTS='([^']+)' npm start$/.exec(start!)?.[1];
    expect(JSON.parse(declared ?? 'null')).toEqual(JSON.parse(json));
  });

  it('its receiver snippet is examples/webhook-receiver.mjs’s own code, line for line in order', () => {
    expect(linesNotInFile(docBlock('webhook-receiver-snippet'), 'examples/webhook-receiver.mjs')).toEqual([]);
  });

  it('states the delivery limits the listener works by', () => {
    const text = page.text.replace(/\s+/g, ' ');
    const limits = deliveryLimits;
    for (const stated of [
      `attempts up to ${limits.concurrency} of an endpoint's deliveries at a time`,
      `its own ${limits.concurrency} attempts in flight per listener task (batches of ${limits.batch})`,
      `${limits.connectTimeoutMs / 1000} seconds to connect`,
      `${limits.timeoutMs / 1000} seconds for the whole attempt`,
      `At most ${limits.maxResponseBytes / 1024} KiB of the answer is read`,
      `each of its batches then waits ${limits.downPauseMs / 1000} s`,
      `expire after ${limits.expireInSeconds} seconds; within ${limits.superviseSeconds} more`,
    ])
      expect(text).toContain(stated);
  });
});
