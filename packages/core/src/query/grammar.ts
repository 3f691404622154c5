/**
 * The Gridify-compatible filter and sort grammar (DESIGN.md "Filter and sort
 * grammar"). Parsing produces an AST and knows nothing about SQL or fields;
 * compile.ts types and maps it. Every failure is a GrammarError.
 */
export class GrammarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GrammarError';
  }
}

export const operators = ['=', '!=', '<', '>', '<=', '>=', '=*', '!*', '^', '!^', '$', '!$'] as const;
export type Operator = (typeof operators)[number];

/** Longest first, so `<=` is never read as `<` followed by a value starting with `=`. */
const operatorsByLength = [...operators].sort((a, b) => b.length - a.length);

export interface Condition {
  kind: 'condition';
  field: string;
  operator: Operator;
  /** null when the value is the bare word `null`. */
  value: string | null;
  caseInsensitive: boolean;
}
export interface Junction {
  kind: 'and' | 'or';
  operands: FilterNode[];
}
export type FilterNode = Condition | Junction;

export interface SortTerm {
  field: string;
  direction: 'asc' | 'desc';
}

const fieldPattern = /^[A-Za-z_][A-Za-z0-9_]*/;
const valueTerminators = new Set([',', '|', ')']);
const maxDepth = 32;

class FilterParser {
  private position = 0;
  constructor(private readonly input: string) {}

  parse(): FilterNode {
    const node = this.parseOr(0);
    if (this.position < this.input.length) this.fail(`unexpected '${this.input[this.position]}'`);
    return node;
  }

  private fail(message: string): never {
    throw new GrammarError(`${message} at position ${this.position + 1}`);
  }

  private parseOr(depth: number): FilterNode {
    const operands = [this.parseAnd(depth)];
    while (this.input[this.position] === '|') {
      this.position++;
      operands.push(this.parseAnd(depth));
    }
    return operands.length === 1 ? operands[0]! : { kind: 'or', operands };
  }

  private parseAnd(depth: number): FilterNode {
    const operands = [this.parsePrimary(depth)];
    while (this.input[this.position] === ',') {
      this.position++;
      operands.push(this.parsePrimary(depth));
    }
    return operands.length === 1 ? operands[0]! : { kind: 'and', operands };
  }

  private parsePrimary(depth: number): FilterNode {
    this.skipSpaces();
    if (this.input[this.position] === '(') {
      if (depth >= maxDepth) this.fail('too deeply nested');
      this.position++;
      const inner = this.parseOr(depth + 1);
      if (this.input[this.position] !== ')') this.fail("expected ')'");
      this.position++;
      this.skipSpaces();
      return inner;
    }
    return this.parseCondition();
  }

  private parseCondition(): Condition {
    const field = fieldPattern.exec(this.input.slice(this.position))?.[0];
    if (!field) this.fail('expected a field name');
    this.position += field.length;
    this.skipSpaces();
    const operator = operatorsByLength.find((candidate) => this.input.startsWith(candidate, this.position));
    if (!operator) this.fail(`expected an operator after '${field}'`);
    this.position += operator.length;
    return { kind: 'condition', field, operator, ...this.parseValue() };
  }

  /** Reads up to an unescaped `,` `|` or `)`; `\` makes the next character literal. */
  private parseValue(): Pick<Condition, 'value' | 'caseInsensitive'> {
    let value = '';
    let rawTail = '';
    while (this.position < this.input.length) {
      const char = this.input[this.position]!;
      if (valueTerminators.has(char)) break;
      if (char === '(') this.fail("unescaped '(' in a value");
      if (char === '\\') {
        const next = this.input[this.position + 1];
        if (next === undefined) this.fail('dangling escape');
        value += next;
        rawTail = '';
        this.position += 2;
        continue;
      }
      value += char;
      rawTail += char;
      this.position++;
    }
    const caseInsensitive = rawTail.endsWith('/i');
    if (caseInsensitive) value = value.slice(0, -2);
    const unescapedNull = rawTail === value && value.trim() === 'null';
    return { value: unescapedNull && !caseInsensitive ? null : value, caseInsensitive };
  }

  private skipSpaces(): void {
    while (this.input[this.position] === ' ') this.position++;
  }
}

export function parseFilter(input: string): FilterNode {
  if (input.trim() === '') throw new GrammarError('empty filter');
  return new FilterParser(input).parse();
}

export function parseOrderBy(input: string): SortTerm[] {
  if (input.trim() === '') throw new GrammarError('empty orderBy');
  return input.split(',').map((part, index) => {
    const words = part.trim().split(/\s+/);
    const [field, direction = 'asc', extra] = words;
    if (!field || !fieldPattern.test(field) || fieldPattern.exec(field)![0] !== field) {
      throw new GrammarError(`term ${index + 1}: expected a field name`);
    }
    const lower = direction.toLowerCase();
    if (extra !== undefined || (lower !== 'asc' && lower !== 'desc')) {
      throw new GrammarError(`term ${index + 1}: expected 'asc' or 'desc' after '${field}'`);
    }
    return { field, direction: lower };
  });
}
