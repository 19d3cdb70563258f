/**
 * Kills something at random moments while load runs, and brings it back: `crash` kills (and names what it
 * killed), `restart` starts it again. What to kill is the caller's choice (the embedded process; in a distributed
 * run, each service in turn, or the broker).
 */
import { sleep, type Random } from './random';

export interface CrashLoopOptions {
  readonly crashes: number;
  readonly random: Random;
  /** How long it runs between a restart and the next kill, uniform in [min, max] ms. */
  readonly uptimeMs: readonly [number, number];
  /** How long it stays down after a kill, uniform in [min, max] ms. Default [0, 300]. */
  readonly downtimeMs?: readonly [number, number];
  /** Also wait until the load had this many more acknowledgements since the restart (it is flowing). Default 5. */
  readonly minAcknowledgedBetween?: number;
  /** The load's acknowledgements so far. */
  readonly acknowledged: () => number;
  /** Longest wait for `minAcknowledgedBetween`. Default 60 s. */
  readonly flowTimeoutMs?: number;
  /** Kills; returns what it killed. */
  readonly crash: (round: number) => Promise<string>;
  /** Starts again what `crash` killed; resolves once it serves. */
  readonly restart: (round: number, killed: string) => Promise<void>;
}

export interface CrashRecord {
  readonly round: number;
  readonly killed: string;
  /** Milliseconds it ran since its previous start. */
  readonly upMs: number;
  /** Acknowledgements of the load when it was killed. */
  readonly acknowledgedAtKill: number;
  /** Milliseconds from the kill until it served again (a figure, never asserted). */
  readonly recoveryMs: number;
}

export async function crashRepeatedly(options: CrashLoopOptions): Promise<CrashRecord[]> {
  const { random } = options;
  const [minDown, maxDown] = options.downtimeMs ?? [0, 300];
  const records: CrashRecord[] = [];
  for (let round = 1; round <= options.crashes; round += 1) {
    const upSince = Date.now();
    const ackAtStart = options.acknowledged();
    await sleep(random.int(options.uptimeMs[0], options.uptimeMs[1]));
    const flowDeadline = Date.now() + (options.flowTimeoutMs ?? 60_000);
    while (options.acknowledged() - ackAtStart < (options.minAcknowledgedBetween ?? 5)) {
      if (Date.now() > flowDeadline)
        throw new Error(
          `round ${round}: the load acknowledged only ${options.acknowledged() - ackAtStart} writes since the last restart`,
        );
      await sleep(50);
    }
    const acknowledgedAtKill = options.acknowledged();
    const killedAt = Date.now();
    const killed = await options.crash(round);
    await sleep(random.int(minDown, maxDown));
    await options.restart(round, killed);
    records.push({ round, killed, upMs: killedAt - upSince, acknowledgedAtKill, recoveryMs: Date.now() - killedAt });
  }
  return records;
}
