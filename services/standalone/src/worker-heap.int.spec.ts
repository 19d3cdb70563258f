/**
 * `npm start`'s `--max-old-space-size` and `--max-semi-space-size` size the main thread's heap only: a worker thread
 * started after `workersUseTheirOwnHeapLimits()` gets the heap its `resourceLimits` declare (the vault's thread, the
 * token verifiers), where before it got the main thread's (V8 lets the flags win over the limits): a 256 MB heap limit
 * and a 33.5 MB new space, whatever it declared. Each case runs npm start's node flags in a child process of its own:
 * the flags are the process's.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { npmStartNodeFlags, repoRoot } from '@switchyard/testing';

interface Heap {
  /** MB of new space after allocating a few hundred MB of short-lived objects. */
  readonly newSpace: number;
  /** The heap's limit, MB (old generation and young). */
  readonly limit: number;
}

const WORKER_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 12 };

/** The main thread's heap and that of a worker declaring WORKER_LIMITS, with or without the release. */
function heaps(release: boolean): { main: Heap; worker: Heap } {
  const script = `
    const { Worker } = require('node:worker_threads');
    const measure = \`(() => {
      let kept = [];
      for (let i = 0; i < 3e6; i++) { kept.push({ i, s: 'x' + i }); if (kept.length > 20000) kept = []; }
      const v8 = require('node:v8');
      const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
      return { newSpace: newSpace / 2 ** 20, limit: v8.getHeapStatistics().heap_size_limit / 2 ** 20 };
    })()\`;
    const main = eval(measure);
    if (${release}) require(${JSON.stringify(path.join(__dirname, 'worker-heap.ts'))}).workersUseTheirOwnHeapLimits();
    const worker = new Worker(\`require('node:worker_threads').parentPort.postMessage(\${measure})\`, {
      eval: true,
      resourceLimits: ${JSON.stringify(WORKER_LIMITS)},
    });
    worker.once('message', (heap) => { console.log(JSON.stringify({ main, worker: heap })); worker.terminate(); });
  `;
  const output = execFileSync(
    process.execPath,
    [...npmStartNodeFlags(), '-r', path.join(repoRoot, 'scripts/register.cjs'), '-e', script],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  return JSON.parse(output.trim().split('\n').at(-1) ?? '') as { main: Heap; worker: Heap };
}

describe("npm start's heap flags are the main thread's", () => {
  it('a worker started after the release gets the heap it declares; the main thread keeps its own', () => {
    const { main, worker } = heaps(true);
    expect(worker.newSpace).toBeLessThanOrEqual(WORKER_LIMITS.maxYoungGenerationSizeMb);
    expect(worker.limit).toBeLessThanOrEqual(
      WORKER_LIMITS.maxOldGenerationSizeMb + WORKER_LIMITS.maxYoungGenerationSizeMb + 1,
    );
    expect(main.newSpace).toBeGreaterThan(16); // 16 MB semi-spaces: 32 MB and more
    expect(main.limit).toBeGreaterThanOrEqual(256); // --max-old-space-size=256, and the young generation
  });

  it('without it, the flags would override the limits: the control that shows what the release changes', () => {
    const { main, worker } = heaps(false);
    expect(worker).toEqual(main);
  });
});
