import { describe, expect, it } from 'vitest';
import { pageQuerySchema } from '@hatchery/core/query/page-query';

/** The messages the request's schema gives for `query`, by parameter; the compiler reads only what it let through. */
function refusals(query: Record<string, string>): Record<string, string[]> {
  const result = pageQuerySchema.safeParse(query);
  const messages: Record<string, string[]> = {};
  for (const fault of result.error?.issues ?? []) (messages[String(fault.path[0])] ??= []).push(fault.message);
  return messages;
}

describe("a list's parameters, bounded where the request is read", () => {
  it('rejects a filter over 500 characters', () => {
    expect(refusals({ filter: `name=${'a'.repeat(496)}` }).filter?.[0]).toContain('500');
    expect(refusals({ filter: `name=${'a'.repeat(495)}` })).toEqual({});
  });

  it('rejects an orderBy over 200 characters', () => {
    expect(refusals({ orderBy: `name,${' '.repeat(200)}` }).orderBy?.[0]).toContain('200');
  });

  it('rejects a cursor over 2048 characters', () => {
    expect(refusals({ after: 'a'.repeat(2049) }).after?.[0]).toContain('2048');
  });
});
