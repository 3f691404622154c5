/** A function that imports at once and then runs for 2 s. */
export const handler = async () => {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  return 'answered';
};
