/**
 * Where a call waits: `reached` once the first call arrives at `pass()`, which returns once `open()` is called;
 * every call after that passes straight through.
 */
export function gate() {
  let reach = () => {};
  let open = () => {};
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    reached,
    open: () => open(),
    pass: async () => {
      reach();
      await opened;
    },
  };
}
