import { en } from 'zod/locales';
import { config } from 'zod/mini';

/**
 * zod for the whole code base: zod/mini, whose functions a bundle keeps only
 * where they are used (classic zod brings its whole API, some 100 KB, into
 * every function), with the English messages classic zod loads by default and
 * zod/mini does not ("Invalid input" for everything otherwise). Field messages
 * reach clients in 422 bodies, so every module takes zod from here, as
 * `import * as z from '@hatchery/platform/schema'`, and none can leave the locale
 * out. A namespace import keeps the bundles small: esbuild drops the zod
 * functions a module never names, which it cannot do through a re-exported
 * namespace object (`export { z }` would bring all of zod and its 50 locales).
 * The locale is this module's side effect: platform's package.json names this
 * file in `sideEffects`, so that no bundle leaves it out.
 */
config(en());

export * from 'zod/mini';
