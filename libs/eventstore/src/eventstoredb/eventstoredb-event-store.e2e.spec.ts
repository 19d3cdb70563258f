import type { Availability } from '@switchyard/testing';
import { eventStoreContract } from '../contract';
import { compareEventStoreDbPositions, EventStoreDbEventStore } from './eventstoredb-event-store';

const url = process.env.EVENTSTORE_URL;
const availability: Availability = url
  ? { available: true }
  : {
      available: false,
      reason:
        'EVENTSTORE_URL is not set (no EventStoreDB server on this machine); set it, e.g. esdb://127.0.0.1:2113?tls=false, to run this suite',
    };

eventStoreContract(
  'EventStoreDbEventStore',
  async () => {
    const store = EventStoreDbEventStore.connect(url ?? '');
    await store.ping();
    return store;
  },
  availability,
  { comparePositions: compareEventStoreDbPositions, optional: true },
);
