import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientBudget, floorRatioGoal, sizeBudgets, warmGoals } from '../../support/budgets';
import { repository } from '../../support/docs';

/** The budgets are data (test/budgets.json); where the docs quote one, they quote what the file holds. */
const page = (file: string) => readFileSync(join(repository, file), 'utf8');
const kib = (bytes: number) => Math.round(bytes / 1024);

describe('the budgets the docs quote', () => {
  it('docs/deploying.md’s table gives each bundle budget of test/budgets.json, and its goal the import ratio', () => {
    const deploying = page('docs/deploying.md');
    for (const [key, budget] of Object.entries(sizeBudgets)) expect(deploying).toMatch(new RegExp(`\\(\`${key}\`\\)\\s*\\|\\s*${kib(budget.bytes)} KB\\s*\\|`));
    expect(deploying).toMatch(new RegExp(`within ${floorRatioGoal}×\\s+its\\s+\\*\\*library floor\\*\\*`));
  });

  it('docs/client.md gives the client’s budget, and docs/benchmarks.md the warm goals', () => {
    expect(page('docs/client.md')).toMatch(new RegExp(`holds it to ${kib(clientBudget.gzipBytes)} KB\\b`));
    const benchmarks = page('docs/benchmarks.md');
    expect(benchmarks).toContain(`goal at most ${warmGoals.overheadMs} ms`);
    expect(benchmarks).toContain(`goal at most ${warmGoals.overPg}×`);
  });
});
