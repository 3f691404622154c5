/** A function whose module takes 2 s to import (its init), then answers at once. */
await new Promise((resolve) => setTimeout(resolve, 2_000));

export const handler = async () => 'answered';
