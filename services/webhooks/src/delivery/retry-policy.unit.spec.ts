import { nextAttemptAfterFailure, nominalDelayMs, retryDelayMs, type RetrySettings } from './retry-policy';

const settings: RetrySettings = { baseMs: 1_000, maxMs: 60_000, maxAgeMs: 3_600_000, timeoutMs: 5_000 };

it('doubles the wait per failure from baseMs, capped at maxMs', () => {
  expect([1, 2, 3, 4, 5, 6, 7, 8].map((failures) => nominalDelayMs(failures, settings))).toEqual([
    1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000,
  ]);
  expect(nominalDelayMs(10_000, settings)).toBe(60_000);
});

it('jitters each wait by at most 20 % either way', () => {
  expect(retryDelayMs(3, settings, () => 0)).toBe(3_200);
  expect(retryDelayMs(3, settings, () => 0.5)).toBe(4_000);
  expect(retryDelayMs(3, settings, () => 0.999_999)).toBe(4_800);
  const waits = Array.from({ length: 1_000 }, () => retryDelayMs(2, settings));
  expect(Math.min(...waits)).toBeGreaterThanOrEqual(1_600);
  expect(Math.max(...waits)).toBeLessThanOrEqual(2_400);
  expect(new Set(waits).size).toBeGreaterThan(100);
});

it('gives up when the next attempt would come after the maximum age since scheduling', () => {
  const scheduledMs = 1_000_000;
  expect(
    nextAttemptAfterFailure({ failures: 1, scheduledMs, nowMs: scheduledMs + 10_000, settings, random: () => 0.5 }),
  ).toBe(scheduledMs + 11_000);
  expect(
    nextAttemptAfterFailure({ failures: 9, scheduledMs, nowMs: scheduledMs + 3_540_000, settings, random: () => 0.5 }),
  ).toBe(scheduledMs + 3_600_000);
  expect(
    nextAttemptAfterFailure({ failures: 9, scheduledMs, nowMs: scheduledMs + 3_550_000, settings, random: () => 0.5 }),
  ).toBeNull();
});
