import type * as KafkaJs from 'kafkajs';

/**
 * kafkajs, loaded by the first Kafka client of the process: the embedded runtime, whose bus is in process, never loads
 * it (143 modules, about 18 MB; docs/performance.md, Start-up and memory). Node caches it after the first call.
 */
export function kafkajs(): typeof KafkaJs {
  const loaded = require('kafkajs') as typeof KafkaJs;
  withoutIdleCheckLoop();
  return loaded;
}

interface RequestQueueState {
  readonly pending: readonly unknown[];
  readonly throttledUntil: number;
}
interface RequestQueuePrototype {
  scheduleCheckPendingRequests(this: RequestQueueState): void;
}
let idleCheckLoopRemoved = false;

/**
 * kafkajs 2.2.4 (the last release) checks a connection's queue of pending requests after every answer, and each check
 * schedules the next one on a timer of `throttledUntil - now` ms: -1 - now when the broker never throttled, which Node
 * runs after 1 ms (and, from Node 24, warns of: `TimeoutNegativeWarning`). So every connection that has had one answer
 * runs a check every millisecond for as long as it lives, whether or not a request waits (tulios/kafkajs#1704, #1751;
 * the fix, #1768, is unreleased): ~2,300 checks and ~25 ms of CPU a second for an idle producer and consumer on this
 * machine, in each process with a Kafka client, and a timer in front of every other callback. Here the check is not
 * scheduled when no request waits and no throttle is running: a request that has to wait is queued by `push`, which
 * schedules the check itself, and every answer checks the queue again.
 */
function withoutIdleCheckLoop(): void {
  if (idleCheckLoopRemoved) return;
  const prototype = (require('kafkajs/src/network/requestQueue') as { prototype: RequestQueuePrototype }).prototype;
  const schedule = prototype.scheduleCheckPendingRequests;
  if (typeof schedule !== 'function')
    throw new Error(
      'kafkajs changed: its RequestQueue has no scheduleCheckPendingRequests (see libs/bus/src/kafka/kafkajs.ts)',
    );
  prototype.scheduleCheckPendingRequests = function (this: RequestQueueState) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  idleCheckLoopRemoved = true;
}
