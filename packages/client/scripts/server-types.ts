import type { FieldType } from '@hatchery/core/query/compile';
import type { ForgeFulfilled, hubEvents, MarketChanged } from '@hatchery/core/realtime/events';
import type * as z from '@hatchery/platform/schema';
import type { httpRoutes } from '@hatchery/functions/routes';
import type { hubPath } from '@hatchery/functions/routes/realtime';
import type { problemSchema } from '@hatchery/functions/problem-schema';
import type { responses } from '@hatchery/functions/responses';

type Table = typeof httpRoutes;
type Flat<T> = { [P in keyof T]: T[P] };

/** Path parameters and bodies as the caller writes them; the query as the server reads it (its numbers numbers), which the client turns back into text. */
type RequestPart<R, P extends 'params' | 'body' | 'query'> = R extends { request: { [Q in P]: infer S extends z.ZodMiniType } }
  ? { [Q in P]: P extends 'query' ? z.output<S> : z.input<S> }
  : {};
type ResponsePart<K> = K extends keyof typeof responses ? { response: z.output<(typeof responses)[K]> } : {};
/** A list's filter and sort fields by name, with the type of each: what the filter builder needs of the read model's field map. */
type FieldsPart<R> = R extends { list: { fields: infer F } } ? { fields: { [N in keyof F]: F[N] extends { type: infer T } ? T : never } } : {};

/**
 * What the published client knows of the server, derived from the route table
 * and the zod schemas. scripts/generate-routes.ts prints it, flattened, into
 * src/route-types.ts, so that the package's declarations need neither zod nor
 * the server's packages; test/unit/client/package.test.ts checks the two are equal.
 */
export interface ServerTypes {
  RouteTypes: {
    -readonly [K in keyof Table as Table[K] extends { internal: true } ? never : K]: Flat<
      Pick<Table[K], 'method' | 'path' | 'auth'> &
        RequestPart<Table[K], 'params'> &
        RequestPart<Table[K], 'body'> &
        RequestPart<Table[K], 'query'> &
        ResponsePart<K> &
        FieldsPart<Table[K]>
    >;
  };
  ProblemBody: z.output<typeof problemSchema>;
  MarketChanged: MarketChanged;
  ForgeFulfilled: ForgeFulfilled;
  HubEventName: keyof typeof hubEvents;
  HubPath: typeof hubPath;
  FieldType: FieldType;
}
