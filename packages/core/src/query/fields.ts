import { trimWhiteSpace, type SortTerm } from './grammar';

export type FieldType = 'bigint' | 'integer' | 'boolean' | 'text';

export interface FieldSpec {
  /** A trusted SQL expression (a column); never built from input. */
  sql: string;
  type: FieldType;
  /** Read from a joined table: a count whose filter names such a field needs the joins. */
  joined?: true;
  /**
   * Text people read (a name): sorted as .NET's culture-aware comparer does,
   * which Gridify's ordering tests expect. Other text (addresses, statuses) is
   * ASCII of one case, which every collation orders alike, so its index serves.
   */
  words?: true;
}

/** The fields a client may filter and sort on, by their API name. */
export type FieldMap = Readonly<Record<string, FieldSpec>>;

export interface OrderSpec {
  /** Used when the client gives no orderBy. */
  defaultOrder: readonly Omit<SortTerm, 'nullCheck'>[];
  /** A unique column (trusted SQL) appended to every order so pages are stable. */
  tieBreaker: OrderTerm;
}

/** One key of an order: the expression as ORDER BY sorts it (its collation included), its direction and type. */
export interface OrderTerm {
  sql: string;
  direction: SortTerm['direction'];
  type: FieldType;
}

/**
 * Gridify matches field names case-insensitively. A Map of own entries, so
 * that `constructor` or `__proto__` are unknown fields like any other.
 */
const lookups = new WeakMap<FieldMap, Map<string, FieldSpec>>();
export function lookupField(fields: FieldMap, name: string): FieldSpec | undefined {
  let lookup = lookups.get(fields);
  if (!lookup) {
    lookup = new Map(Object.entries(fields).map(([key, spec]) => [key.toLowerCase(), spec]));
    lookups.set(fields, lookup);
  }
  // ASCII folding only: the names are ASCII, and Unicode folding would let e.g. the Kelvin sign stand for 'k'.
  return lookup.get(name.replace(/[A-Z]/g, (char) => char.toLowerCase()));
}

const int32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };
export const maxBigIntDigits = 78;

/** Int32Converter's hexadecimal forms (`#1F`, `0x1F`, `&h1F`), read as Convert.ToInt32(digits, 16) does: 32 bits, two's complement. */
const int32Hex = /^(?:#|0[xX]|&[hH])([0-9A-Fa-f]{1,8})$/;

/**
 * .NET's integer parsing as Gridify's type converter does it: trimmed, an
 * optional sign, decimal digits; a 32-bit field also takes Int32Converter's
 * hexadecimal forms. An on-chain value (big integer) is decimal only.
 * The value in decimal, or undefined when the text is no integer of the type.
 */
export function readInteger(type: 'bigint' | 'integer', raw: string): string | undefined {
  const text = trimWhiteSpace(raw);
  const hex = type === 'integer' ? int32Hex.exec(text) : null;
  if (hex) return String(Number.parseInt(hex[1]!, 16) | 0);
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  const inRange = type === 'integer' ? value >= int32.min && value <= int32.max : (value < 0n ? -value : value).toString().length <= maxBigIntDigits;
  return inRange ? value.toString() : undefined;
}

/** Gridify's booleans: exactly `1` or `0`, or `true`/`false` in any case with white space around. */
export function readBoolean(raw: string): 'true' | 'false' | undefined {
  if (raw === '1') return 'true';
  if (raw === '0') return 'false';
  const word = trimWhiteSpace(raw).toLowerCase();
  return word === 'true' || word === 'false' ? word : undefined;
}

/** PostgreSQL text cannot hold NUL, so no stored value could match one and the driver would fail on it. */
export const storableText = (text: string) => !text.includes('\0');

/** Whether `text` is a value of `type` as PostgreSQL writes one: what the readers read back unchanged. */
export function writtenAs(type: FieldType, text: string): boolean {
  switch (type) {
    case 'text':
      return storableText(text);
    case 'boolean':
      return readBoolean(text) === text;
    default:
      return readInteger(type, text) === text;
  }
}
