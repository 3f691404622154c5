/**
 * The filter and sort grammar of Gridify (the .NET library the clients of the
 * replaced system use; docs/http-api.md, Queries), token for token: a
 * lexer over the whole string, then a parser in which `,` (and) and `|` (or)
 * have equal precedence, left to right. Parsing knows nothing about SQL or
 * fields; parse.ts types the tree. Every failure is a GrammarError.
 */
export class GrammarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GrammarError';
  }
}

export const operators = ['=', '!=', '<', '>', '<=', '>=', '=*', '!*', '^', '!^', '$', '!$'] as const;
export type Operator = (typeof operators)[number];

export interface Condition {
  kind: 'condition';
  field: string;
  operator: Operator;
  /** The value with escapes removed; leading white space is not part of it, trailing white space is. */
  value: string;
  /** Nothing after the operator (`field=`): Gridify's "null or default". */
  empty: boolean;
  caseInsensitive: boolean;
}
interface Junction {
  kind: 'and' | 'or';
  left: FilterNode;
  right: FilterNode;
}
export type FilterNode = Condition | Junction;

export interface SortTerm {
  field: string;
  direction: 'asc' | 'desc';
  /** A trailing `?` or `!`: Gridify orders by "has a value" / "has none" instead. */
  nullCheck: boolean;
}

/** .NET's char.IsWhiteSpace, which Gridify uses to skip and trim. */
const whiteSpace = /[\p{Zs}\p{Zl}\p{Zp}\t\n\v\f\r\u0085]/u;
const isWhiteSpace = (char: string | undefined): boolean => char !== undefined && whiteSpace.test(char);
/** .NET's String.TrimEnd. */
function trimEndWhiteSpace(text: string): string {
  let end = text.length;
  while (end > 0 && isWhiteSpace(text[end - 1])) end--;
  return text.slice(0, end);
}
/** .NET's String.Trim. */
export function trimWhiteSpace(text: string): string {
  const end = trimEndWhiteSpace(text);
  let start = 0;
  while (start < end.length && isWhiteSpace(end[start])) start++;
  return end.slice(start);
}

// char.IsLetter / IsLetterOrDigit test one UTF-16 unit, so half of a surrogate pair is neither.
const letter = /^\p{L}$/u;
const letterOrDigit = /^[\p{L}\p{Nd}]$/u;
const fieldPart = (char: string | undefined) => char !== undefined && (letterOrDigit.test(char) || char === '_' || char === '.' || char === '-');

type Token =
  | { kind: 'open' | 'close' | 'and' | 'or' | 'caseInsensitive' | 'end'; position: number }
  | { kind: 'operator'; operator: Operator; position: number }
  | { kind: 'field' | 'value' | 'indexer'; text: string; position: number };

/** Two-character operators first, so `!=` is never `!` then `=`. */
const operatorTokens: readonly Operator[] = ['!^', '!$', '=*', '!=', '!*', '<=', '>=', '^', '$', '=', '<', '>'];
const valueStops = new Set(['(', ')', ',', '|']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;
  let waitingForValue = false;
  const at = (offset = 0) => input[position + offset];
  const fail = (message: string): never => {
    throw new GrammarError(`${message} at position ${position + 1}`);
  };
  while (position < input.length) {
    const start = position;
    const char = at()!;
    const single = { '(': 'open', ')': 'close', ',': 'and', '|': 'or' } as const;
    if (char in single) {
      tokens.push({ kind: single[char as keyof typeof single], position: start });
      waitingForValue = false;
      position++;
      continue;
    }
    const operator = operatorTokens.find((candidate) => input.startsWith(candidate, position));
    if (operator) {
      tokens.push({ kind: 'operator', operator, position: start });
      waitingForValue = true;
      position += operator.length;
      continue;
    }
    if (char === '/' && at(1) === 'i') {
      tokens.push({ kind: 'caseInsensitive', position: start });
      position += 2;
      continue;
    }
    if (isWhiteSpace(char)) {
      while (isWhiteSpace(at())) position++;
      continue;
    }
    if (waitingForValue) {
      tokens.push({ kind: 'value', text: readValue(), position: start });
      waitingForValue = false;
      continue;
    }
    if (char === '[') {
      const close = input.indexOf(']', position + 1);
      if (close < 0) fail("an indexer without ']'");
      tokens.push({ kind: 'indexer', text: input.slice(position + 1, close), position: start });
      position = close + 1;
      continue;
    }
    if (letter.test(char)) {
      while (fieldPart(at())) position++;
      tokens.push({ kind: 'field', text: input.slice(start, position), position: start });
      continue;
    }
    fail(`unexpected '${char}'`);
  }
  tokens.push({ kind: 'end', position: input.length });
  return tokens;

  /** Up to an unescaped `(` `)` `,` `|` or `/i`; `\` makes the next character literal (a `\` at the very end is dropped). */
  function readValue(): string {
    let value = '';
    let escaped = false;
    while (position < input.length) {
      const char = at()!;
      if (escaped) {
        value += char;
        escaped = false;
      } else if (char === '\\') {
        escaped = true;
      } else if (valueStops.has(char) || (char === '/' && at(1) === 'i')) {
        break;
      } else {
        value += char;
      }
      position++;
    }
    return value;
  }
}

const maxDepth = 32;

class FilterParser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  /** A method, not a getter: TypeScript would keep a narrowing of it across `index++`. */
  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private fail(message: string): never {
    throw new GrammarError(`${message} at position ${this.peek().position + 1}`);
  }

  parse(): FilterNode {
    const node = this.parseTerm(0);
    if (this.peek().kind !== 'end') this.fail(`unexpected ${describe(this.peek())}`);
    return node;
  }

  /** Gridify's ParseTerm: `,` and `|` bind equally, left to right. */
  private parseTerm(depth: number): FilterNode {
    let left = this.parseFactor(depth);
    for (let junction = this.peek(); junction.kind === 'and' || junction.kind === 'or'; junction = this.peek()) {
      const kind = junction.kind;
      this.index++;
      left = { kind, left, right: this.parseFactor(depth) };
    }
    return left;
  }

  private parseFactor(depth: number): FilterNode {
    if (this.peek().kind === 'open') {
      if (depth >= maxDepth) this.fail('too deeply nested');
      this.index++;
      const inner = this.parseTerm(depth + 1);
      if (this.peek().kind !== 'close') this.fail(`expected ')' but found ${describe(this.peek())}`);
      this.index++;
      if (this.peek().kind === 'operator') this.fail('an operator after a group');
      return inner;
    }
    const field = this.peek();
    if (field.kind !== 'field') this.fail(`expected a field name but found ${describe(field)}`);
    this.index++;
    if (this.peek().kind === 'indexer') this.fail(`'${field.text}' takes no indexer`);
    const operator = this.peek();
    if (operator.kind !== 'operator') this.fail(`expected an operator after '${field.text}'`);
    this.index++;
    const condition: Condition = { kind: 'condition', field: field.text, operator: operator.operator, ...this.parseValue() };
    // Gridify parses `name==x` as a condition on a condition and then refuses to build it.
    if (this.peek().kind === 'operator') this.fail(`a second operator after '${field.text}${operator.operator}'`);
    return condition;
  }

  private parseValue(): Pick<Condition, 'value' | 'empty' | 'caseInsensitive'> {
    const token = this.peek();
    if (token.kind === 'caseInsensitive') {
      this.index++;
      return { value: '', empty: true, caseInsensitive: true };
    }
    if (token.kind !== 'value') return { value: '', empty: true, caseInsensitive: false };
    this.index++;
    const caseInsensitive = this.peek().kind === 'caseInsensitive';
    if (caseInsensitive) this.index++;
    return { value: token.text, empty: false, caseInsensitive };
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end';
    case 'operator':
      return `'${token.operator}'`;
    case 'field':
    case 'value':
      return `'${token.text}'`;
    case 'indexer':
      return `'[${token.text}]'`;
    default:
      return `'${{ open: '(', close: ')', and: ',', or: '|', caseInsensitive: '/i' }[token.kind]}'`;
  }
}

/** A blank filter is no filter (Gridify skips it); callers check isBlank first. */
export const isBlank = (input: string | undefined): input is undefined | '' => input === undefined || trimWhiteSpace(input) === '';

export function parseFilter(input: string): FilterNode {
  if (isBlank(input)) throw new GrammarError('empty filter');
  return new FilterParser(tokenize(input)).parse();
}

/**
 * Gridify's ordering: terms split on `,` and trimmed; a term with a space is
 * words split on spaces and tabs, the first the field and the last exactly
 * `asc` or `desc`; a term without one is just the field, ascending.
 */
export function parseOrderBy(input: string): SortTerm[] {
  if (isBlank(input)) throw new GrammarError('empty orderBy');
  return input.split(',').map((part, index) => {
    const term = trimWhiteSpace(part);
    let member = term;
    let direction: SortTerm['direction'] = 'asc';
    if (term.includes(' ')) {
      const words = term.split(/[ \t]+/).filter(Boolean);
      const last = words[words.length - 1];
      if (last !== 'asc' && last !== 'desc') {
        // Gridify compares the word as it is: 'DESC' is refused there too, so it is here, with the reason.
        const lowercase = last?.toLowerCase();
        if (lowercase === 'asc' || lowercase === 'desc') throw new GrammarError(`term ${index + 1}: the direction is lowercase, '${lowercase}', not '${last}'`);
        throw new GrammarError(`term ${index + 1}: expected 'asc' or 'desc' at its end`);
      }
      member = words[0]!;
      direction = last;
    }
    const nullCheck = member.endsWith('?') || member.endsWith('!');
    // Only the end is trimmed, so `!name` names ' name', which is no field.
    const field = trimEndWhiteSpace(member.replace(/[?!]/g, ' '));
    if (field === '') throw new GrammarError(`term ${index + 1}: expected a field name`);
    return { field, direction, nullCheck };
  });
}
