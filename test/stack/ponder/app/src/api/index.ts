import { Hono } from 'hono';

// Ponder requires an API file exporting a Hono app; it serves /ready, /status, /health and /metrics itself.
// No GraphQL: it would write generated/schema.graphql on every start.
export default new Hono();
