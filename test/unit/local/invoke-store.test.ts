import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import { InvocationScoped } from '@aws-lambda-powertools/commons/utils/invocation-scoped';
import { describe, expect, it } from 'vitest';
import { ConcurrentInvokeStore } from '@hatchery/local/gateway/invoke-store';

const requestId = InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID;
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("the local runtime's invoke store (concurrent invocations in one process)", () => {
  it('keeps each invocation’s values apart across awaits, and none outside an invocation', async () => {
    const store = new ConcurrentInvokeStore();
    const invoke = (id: string) =>
      store.run({ [requestId]: id }, async () => {
        store.set('seen', id);
        await pause();
        return [store.getRequestId(), store.get('seen')];
      });
    expect(await Promise.all([invoke('a'), invoke('b')])).toEqual([
      ['a', 'a'],
      ['b', 'b'],
    ]);
    expect(store.hasContext()).toBe(false);
    expect(store.get('seen')).toBeUndefined();
    expect(store.getRequestId()).toBe('-');
  });

  it('refuses to overwrite a field Lambda sets, and a write outside an invocation', () => {
    const store = new ConcurrentInvokeStore();
    for (const key of Object.values(InvokeStoreBase.PROTECTED_KEYS)) {
      expect(() => store.run({}, () => store.set(key, 'x'))).toThrow(/protected Lambda context field/);
    }
    expect(() => store.set('free', 1)).toThrow(/No context available/);
  });

  it('is the store the library and Powertools use once the local runtime has loaded', async () => {
    await import('@hatchery/local/gateway/lambda');
    const store = await InvokeStore.getInstanceAsync(true);
    expect(store).toBeInstanceOf(ConcurrentInvokeStore);
    const scoped = new InvocationScoped<string[]>('test.values', { fresh: () => [] });
    const invoke = (id: string) =>
      store.run({ [requestId]: id }, async () => {
        scoped.get().push(id);
        await pause();
        return scoped.get();
      });
    expect(await Promise.all([invoke('a'), invoke('b')])).toEqual([['a'], ['b']]);
  });
});
