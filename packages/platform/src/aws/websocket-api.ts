/** API Gateway's quotas of a WebSocket API (docs/realtime.md, The hub), which the local gateway enforces as AWS does. */
export const webSocketApiQuotas = {
  idleTimeoutMs: 10 * 60_000,
  connectionLifetimeMs: 2 * 60 * 60_000,
  messageBytes: 128 * 1024,
  /** A PostToConnection's data. */
  managementPayloadBytes: 128 * 1024,
} as const;
