import { describeWithInfra, type Availability } from '@switchyard/testing';
import type { EventStore } from '../event-store';
import { appendContract } from './append.contract';
import type { EventStoreContractOptions } from './contract-support';
import { readContract } from './read.contract';
import { subscribeContract } from './subscribe.contract';

/**
 * The behaviour every EventStore adapter must show, run by each adapter's spec. One store is opened per suite
 * (`makeStore`) and closed after it; every test writes to streams of its own with a random suffix, so the suite
 * can run against a shared server that holds other data.
 */
export function eventStoreContract(
  name: string,
  makeStore: () => Promise<EventStore>,
  availability: Availability,
  options: EventStoreContractOptions = {},
): void {
  describeWithInfra(
    name,
    availability,
    () => {
      let store: EventStore | undefined;
      beforeAll(async () => {
        store = await makeStore();
      });
      afterAll(async () => {
        await store?.close();
        await options.teardown?.();
      });
      const context = {
        options,
        store: (): EventStore => {
          if (!store) throw new Error('the store under test is not open');
          return store;
        },
      };

      appendContract(context);
      readContract(context);
      subscribeContract(context);
    },
    options.optional === undefined ? {} : { optional: options.optional },
  );
}
