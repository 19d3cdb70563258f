/**
 * Argument checks shared by every adapter, so that a bad argument fails the same way everywhere, before any I/O.
 * They mirror what Redis itself refuses (`PX 0`, `PX 1.5`, `INCRBY k 1.5`).
 */

export function checkTtl(ttlMs: number | undefined): void {
  if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs > 0)) {
    throw new RangeError(`ttlMs must be a positive integer number of milliseconds, got ${ttlMs}`);
  }
}

export function checkIncrement(by: number): void {
  if (!Number.isSafeInteger(by)) {
    throw new RangeError(`increment "by" must be a safe integer, got ${by}`);
  }
}
