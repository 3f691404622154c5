/** The limits of the HTTP API, the indexer's reads, the listener and the hub (docs/http-api.md and docs/realtime.md name them). */
export const limits = {
  page: { min: 1, max: 200, default: 1 },
  pageSize: { min: 1, max: 100, default: 20 },
  filterLength: 500,
  orderByLength: 200,
  summaryCacheMs: 30_000,
  /**
   * The leading listener's sums of the summary's row (listener/src/summary.ts): at most once per `changedMs` while
   * notifications name a summed table, and at least once per `maxIntervalMs` whatever they say (a reorg's revert
   * names no table), so its row, a sum's start plus its length old, stays inside summaryCacheMs for every cold instance.
   */
  summaryRefresh: { changedMs: 10_000, maxIntervalMs: 20_000 },
  /** How long an instance reuses what it read of the indexer's position (the lists' X-Indexed-Block, /health). */
  freshnessCacheMs: 1_000,
  /**
   * A read's `minBlock` (docs/http-api.md "Reading your own writes"): how long a request waits for the index to reach
   * it before answering 409, polling Ponder's checkpoint every `pollMs` (one query per instance per tick, on a pooled
   * connection held only for it); a block more than `maxAheadBlocks` past the indexed one is refused at once (422).
   */
  minBlock: { waitMs: 3_000, pollMs: 200, maxAheadBlocks: 10_000, retryAfterSeconds: 1 },
  /** A list's totalCount is shared per instance for this long, keyed by list and compiled filter; the entries are bounded. */
  countCache: { ttlMs: 5_000, maxEntries: 10_000 },
  /** Compiled page statements kept per list and instance, by the request's query. */
  compiledPages: 256,
  /** A request at least this long logs its line at INFO like a failed one (docs/operating.md, Logs). */
  slowRequestMs: 1_000,
  /** Successful public GETs: what a shared cache (CloudFront) may serve without asking, then serve stale while it revalidates. */
  publicCache: { sMaxAgeSeconds: 5, staleWhileRevalidateSeconds: 5 },
  /** A list's `after`, the cursor of the page before: the longest this service writes is well under it. */
  cursorLength: 2048,
  /** A list's `v` parameter (a version the client saw, for shared caches' keys only). */
  versionLength: 64,
  listenerPollMs: 5_000,
  listenerReconnectMs: 5_000,
  /** The hub (docs/realtime.md, The hub); the first four are API Gateway WebSocket API quotas. */
  hub: {
    idleTimeoutMs: 10 * 60_000,
    connectionLifetimeMs: 2 * 60 * 60_000,
    messageBytes: 128 * 1024,
    managementPayloadBytes: 128 * 1024,
    groupsPerConnection: 100,
    /** Posts in flight per fan-out (the listener's own, and each shard's). */
    fanOutConcurrency: 64,
    /**
     * Connections a shard claims in the delivery ledger at a time (core/realtime/ledger.ts): a claim's round trip must
     * take less than posting the run before it, or the ledger paces the posts; a shard cut off mid-way loses at most
     * three runs' frames, which those clients see as a gap.
     */
    claimRun: 256,
    /** Partitions the connection records are spread over (`connections#0` …), and so the fan-out's parallelism: one function invocation per shard. */
    connectionShards: 16,
    /**
     * Audiences up to this size the listener posts itself, sparing the hop to the fan-out function: a shard of at most
     * `smallAudience / connectionShards` records is posted by the listener, any larger one by a shard invocation.
     */
    smallAudience: 512,
    /** Times the listener tries a failed shard invocation again (it fails before its first post, so a retry re-sends nothing). */
    shardRetries: 2,
    /**
     * The fan-out function's timeout (infra, and the local stack's Lambda service). A shard posts at its part of the
     * broadcast budget, so it takes about as long as the whole audience at the budget: 5 minutes carry 1.3 million
     * connections at the default budget's broadcast share (4,500 a second).
     */
    shardTimeoutMs: 300_000,
    /** A shard invocation stops posting this long before its deadline, so a timeout never makes the retry re-send what was sent. */
    shardDeadlineMarginMs: 2_000,
    /** A failed-over listener resumes the saved forge cursor only when it is this fresh; older means the clients have given up (45 s). */
    listenerStateMaxAgeMs: 10 * 60_000,
    /**
     * The share of the fan-out budget kept for targeted events (forgeFulfilled), so they never wait behind a
     * broadcast: a tenth, since a group is a buyer's few tabs while a broadcast is every connection.
     */
    targetedShare: 0.1,
    /**
     * How long the listener keeps trying a forgeFulfilled post answered 429: after 45 s the buyer's client has given
     * up waiting and read its forge requests (the client's forge fallback, docs/realtime.md), so a later post is of no use.
     */
    targetedDeadlineMs: 45_000,
    /**
     * After a 429 without Retry-After, how long a lane stops posting: long enough for the posts in flight to come back,
     * so their 429s count as one. Under a budget, a 429 says others spend the quota's share the budget counted on, so
     * the lane lets the quota's burst fill back; without one, its own posts emptied it, and speed is what was asked.
     */
    throttlePauseMs: { budgeted: 1_000, unbudgeted: 250 },
    /** After a 429 the posting rate halves, then climbs back to its share of the budget over this long. */
    throttleRecoveryMs: 10_000,
    /** More new fulfilments than this in one read is the indexer back-filling history, not events anyone waits for. */
    backfillFulfilments: 1_000,
  },
  /** Request bodies above this are 413; the one JSON body the API takes (link wallet) is under 300 bytes. */
  requestBodyBytes: 16 * 1024,
} as const;

export const patterns = {
  address: /^0x[0-9a-fA-F]{40}$/,
} as const;
