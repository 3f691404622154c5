/** A function that answers which execution environment ran it (a module's state lives as long as its worker), after `waitMs`. */
const instance = Math.random().toString(36).slice(2);

export const handler = async (event: { waitMs?: number }) => {
  await new Promise((resolve) => setTimeout(resolve, event.waitMs ?? 0));
  return instance;
};
