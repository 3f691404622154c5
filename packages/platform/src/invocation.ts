import { InvocationScoped } from '@aws-lambda-powertools/commons/utils/invocation-scoped';

let concurrent: boolean | undefined;

/**
 * State of the running invocation. Lambda's runtime runs invocations
 * concurrently only when it sets AWS_LAMBDA_MAX_CONCURRENCY, and then keeps
 * each in its invoke store, where this state goes too (as Powertools' own
 * does); otherwise one value per process is the invocation's. The variable is
 * read once, at first use: Powertools reads it on every access, which a
 * profile of a warm call showed as its largest cost.
 */
export function invocationScoped<T extends object>(name: string, fresh: () => T): { get(): T; reset(): void } {
  let scoped: InvocationScoped<T> | undefined;
  let value: T | undefined;
  const isConcurrent = () => (concurrent ??= Boolean(process.env.AWS_LAMBDA_MAX_CONCURRENCY));
  return {
    get: () => {
      if (isConcurrent()) return (scoped ??= new InvocationScoped<T>(name, { fresh })).get();
      return (value ??= fresh());
    },
    reset: () => {
      if (isConcurrent()) (scoped ??= new InvocationScoped<T>(name, { fresh })).reset();
      else value = undefined;
    },
  };
}
