/** `freePort`'s range: a slice per Vitest worker, so that two workers never choose the same port. */
import { freePortRange } from './probes';

it('gives each Vitest worker its own slice below the ephemeral range, and the whole range outside Vitest', () => {
  const whole = freePortRange(undefined);
  const slices = ['1', '2', '3', '4'].map((pool) => freePortRange(pool));
  for (const slice of slices) {
    expect(slice.from).toBeGreaterThanOrEqual(whole.from);
    expect(slice.to).toBeLessThanOrEqual(whole.to);
    expect(slice.to - slice.from).toBeGreaterThan(1_000);
  }
  for (let i = 1; i < slices.length; i += 1) expect(slices[i]!.from).toBeGreaterThanOrEqual(slices[i - 1]!.to);
});
