/**
 * Each reliability suite writes its figures to tests/reliability/results/<suite>.json (the folder is made at run
 * time and not committed), so that docs/reliability.md can quote the last full run, and prints one summary line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@switchyard/testing';

export const resultsDir = path.join(repoRoot, 'tests/reliability/results');

/** Writes `<suite>.json` with the figures (plus when and in which mode) and returns its path. */
export function writeResults(suite: string, figures: Record<string, unknown>): string {
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${suite}.json`);
  const body = {
    suite,
    mode: process.env.RELIABILITY_FULL === '1' ? 'full' : 'ci',
    finished_at: new Date().toISOString(),
    ...figures,
  };
  fs.writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
  return file;
}
