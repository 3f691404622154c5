import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';

type InvocationValues = Parameters<InvokeStoreBase['run']>[0];

const protectedKeys = new Set<string | symbol>(Object.values(InvokeStoreBase.PROTECTED_KEYS));

/**
 * The invoke store Lambda's runtime provides when invocations run
 * concurrently (`globalThis.awslambda.InvokeStore`, which the library and
 * Powertools use when it is there): each invocation's values in an
 * AsyncLocalStorage context of its own. The local runtime provides its own,
 * as the library's concurrent store builds an array of its protected keys on
 * every write, and Powertools writes its invocation-scoped state several
 * times a request.
 */
export class ConcurrentInvokeStore extends InvokeStoreBase {
  readonly #contexts = new AsyncLocalStorage<InvocationValues>();

  protected override isProtectedKey(key: string | symbol): boolean {
    return protectedKeys.has(key);
  }

  getContext(): InvocationValues | undefined {
    return this.#contexts.getStore();
  }

  hasContext(): boolean {
    return this.#contexts.getStore() !== undefined;
  }

  get<T = unknown>(key: string | symbol): T | undefined {
    return this.#contexts.getStore()?.[key] as T | undefined;
  }

  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const values = this.#contexts.getStore();
    if (!values) throw new Error('No context available');
    values[key] = value;
  }

  run<T>(values: InvocationValues, fn: () => T): T {
    return this.#contexts.run(values, fn);
  }
}
