/**
 * Runs `work` when triggered, never twice at once: triggers that arrive while
 * it runs are folded into one more run, so a burst of notifications costs at
 * most two reads, not one per notification.
 */
export function coalesce(work: () => Promise<void>) {
  let running: Promise<void> | undefined;
  let again = false;

  const loop = async () => {
    do {
      again = false;
      await work();
    } while (again);
  };

  return {
    trigger(): void {
      if (running) {
        again = true;
        return;
      }
      running = loop().finally(() => {
        running = undefined;
      });
    },
    /** Resolves once no run is in progress or pending. */
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}

/**
 * Runs `work` on the values pushed, one at a time and in order, keeping only
 * the newest value that arrives while a run is in progress or waits for
 * `ready`: a snapshot that a newer one replaced before it went out is never sent.
 */
export function latestOnly<T>(work: (value: T) => Promise<void>, ready: () => Promise<void> = async () => undefined) {
  let pending: { value: T } | undefined;
  const runs = coalesce(async () => {
    // The value is taken only once the run may start, so one pushed during the wait replaces it.
    await ready();
    const next = pending;
    pending = undefined;
    if (next) await work(next.value);
  });
  return {
    push(value: T): void {
      pending = { value };
      runs.trigger();
    },
    /** Queues `value` only if nothing newer waits: a value pushed since replaces it. */
    offer(value: T): void {
      pending ??= { value };
      runs.trigger();
    },
    idle: () => runs.idle(),
  };
}
