import { describe, it } from 'vitest';

/** Whether a piece of infrastructure a suite needs can be reached, and if not, why. */
export type Availability = { readonly available: true } | { readonly available: false; readonly reason: string };

/** Set by `npm test -- --require-infra` (CI): an unreachable Kafka, Redis or PostgreSQL fails the run. */
export const infraRequired = (): boolean => process.env.SWITCHYARD_REQUIRE_INFRA === '1';

/**
 * `describe` for a suite that needs real infrastructure. Reachable: the suite runs. Unreachable: a skip line
 * naming the reason is printed and the suite is skipped, unless infrastructure is required (CI), in which case
 * a failing test carries the reason. `optional: true` (EventStoreDB) always skips with the printed line.
 */
export function describeWithInfra(
  name: string,
  availability: Availability,
  body: () => void,
  options: { optional?: boolean } = {},
): void {
  if (availability.available) {
    describe(name, body);
    return;
  }
  if (infraRequired() && !options.optional) {
    describe(name, () => {
      it('has its infrastructure reachable', () => {
        throw new Error(`required infrastructure is unreachable: ${availability.reason}`);
      });
    });
    return;
  }
  process.stdout.write(`SKIP ${name}: ${availability.reason}\n`);
  describe.skip(name, body);
}
