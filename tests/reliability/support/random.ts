/** A seeded PRNG (mulberry32), so that a failing run can be repeated with its seed (`RELIABILITY_SEED`). */
export interface Random {
  readonly seed: number;
  /** [0, 1) */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** true with probability p. */
  chance(p: number): boolean;
}

export function seededRandom(
  seed: number = Number(process.env.RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31)),
): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
