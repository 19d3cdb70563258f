/**
 * kafkajs 2.2.4's request queue, once a connection has had an answer, checks for pending requests on a timer of 1 ms
 * whether or not any request waits (tulios/kafkajs#1704, #1751): ~2,300 checks a second and ~25 ms of CPU a second per
 * idle client on this machine, in every process with a Kafka client. `kafkajs()` loads it without that loop.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { kafkajs } from './kafkajs';

interface QueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests: () => void;
}
const requestQueue = () => {
  kafkajs();
  return (require('kafkajs/src/network/requestQueue') as { prototype: { scheduleCheckPendingRequests(): void } })
    .prototype;
};
const queue = (state: Partial<QueueState>): QueueState => ({
  pending: [],
  throttledUntil: -1,
  throttleCheckTimeoutId: null,
  checkPendingRequests: vi.fn(),
  ...state,
});

afterEach(() => vi.useRealTimers());

it('schedules no check when no request waits and the broker does not throttle', () => {
  const idle = queue({});
  requestQueue().scheduleCheckPendingRequests.call(idle);
  expect(idle.throttleCheckTimeoutId).toBeNull();
});

it('still checks a waiting request, and again when a throttle ends', () => {
  vi.useFakeTimers();
  const waiting = queue({ pending: [{}] });
  requestQueue().scheduleCheckPendingRequests.call(waiting);
  expect(waiting.throttleCheckTimeoutId).not.toBeNull();
  vi.advanceTimersByTime(10);
  expect(waiting.checkPendingRequests).toHaveBeenCalledTimes(1);

  const throttled = queue({ throttledUntil: Date.now() + 500 });
  requestQueue().scheduleCheckPendingRequests.call(throttled);
  vi.advanceTimersByTime(499);
  expect(throttled.checkPendingRequests).not.toHaveBeenCalled();
  vi.advanceTimersByTime(2);
  expect(throttled.checkPendingRequests).toHaveBeenCalledTimes(1);
});
