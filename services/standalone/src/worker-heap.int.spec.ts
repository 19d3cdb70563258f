/**
 * `npm start`'s `--max-semi-space-size` sizes the main thread's young generation only: a worker thread started after
 * `workersUseTheirOwnHeapLimits()` gets the young generation its `resourceLimits` declare (the vault's thread, the
 * token verifiers), where before it got the main thread's 33.5 MB new space whatever it declared (the flag wins over
 * the limits). Each case runs npm start's node flags in a child process of its own: the flag is the process's.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@switchyard/testing';

/** package.json's `start`: `exec node <flags> -r ./scripts/register.cjs <entry>`. */
function npmStartNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const flags = /^exec\s+node\s+(.*?)\s*-r\s/.exec(scripts.start ?? '')?.[1];
  if (!flags) throw new Error(`no node flags in npm start: ${scripts.start}`);
  return flags.split(/\s+/);
}

/** The main thread's and a worker's new space (MB) after each allocated a few hundred MB of short-lived objects. */
function newSpaces(release: boolean, workerYoungGenerationMb: number): { main: number; worker: number } {
  const script = `
    const { Worker } = require('node:worker_threads');
    const churn = \`(() => {
      let kept = [];
      for (let i = 0; i < 3e6; i++) { kept.push({ i, s: 'x' + i }); if (kept.length > 20000) kept = []; }
      const spaces = require('node:v8').getHeapSpaceStatistics();
      return spaces.find((space) => space.space_name === 'new_space').space_size / 2 ** 20;
    })()\`;
    const main = eval(churn);
    if (${release}) require(${JSON.stringify(path.join(__dirname, 'worker-heap.ts'))}).workersUseTheirOwnHeapLimits();
    const worker = new Worker(\`require('node:worker_threads').parentPort.postMessage(\${churn})\`, {
      eval: true,
      resourceLimits: { maxYoungGenerationSizeMb: ${workerYoungGenerationMb} },
    });
    worker.once('message', (space) => { console.log(JSON.stringify({ main, worker: space })); worker.terminate(); });
  `;
  const output = execFileSync(
    process.execPath,
    [...npmStartNodeFlags(), '-r', path.join(repoRoot, 'scripts/register.cjs'), '-e', script],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  return JSON.parse(output.trim().split('\n').at(-1) ?? '') as { main: number; worker: number };
}

describe("npm start's young generation is the main thread's", () => {
  it('a worker started after the release gets the young generation it declares; the main thread keeps its own', () => {
    const spaces = newSpaces(true, 12);
    expect(spaces.worker).toBeLessThanOrEqual(12);
    expect(spaces.main).toBeGreaterThan(16); // 16 MB semi-spaces: 32 MB and more
  });

  it('without it, the flag would override the limit: the control that shows what the release changes', () => {
    const spaces = newSpaces(false, 12);
    expect(spaces.worker).toBe(spaces.main);
  });
});
