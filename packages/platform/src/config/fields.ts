import * as z from '../schema';

/** A comma-separated list, trimmed, empty items left out; empty when unset. */
/* @__NO_SIDE_EFFECTS__ */
export function list() {
  return z.pipe(
    z._default(z.string(), ''),
    z.transform((value: string) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  );
}

/** A whole number of at least `min`, `fallback` when unset. */
/* @__NO_SIDE_EFFECTS__ */
export function wholeNumber(fallback: number, min = 0) {
  return z._default(z.coerce.number().check(z.int(), z.gte(min)), fallback);
}

/** A non-empty string, `fallback` when unset. */
/* @__NO_SIDE_EFFECTS__ */
export function nonEmpty(fallback: string) {
  return z._default(z.string().check(z.minLength(1)), fallback);
}
