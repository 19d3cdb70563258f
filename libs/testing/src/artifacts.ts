/**
 * What a test run leaves for the data-protection scan (issue 11): with SWITCHYARD_TEST_ARTIFACTS set (CI sets it),
 * test data directories are kept instead of removed, child processes' output and webhook bodies are written there,
 * and `scripts/scan-card-data.ts` reads all of it after the run. Unset (a developer's run), nothing changes: data
 * directories live under the OS temp folder and are removed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The folder a CI run keeps its artifacts in; undefined when the run keeps nothing. */
export const testArtifactsDir = (): string | undefined => process.env.SWITCHYARD_TEST_ARTIFACTS || undefined;

/** A fresh data directory for one test runtime (`switchyard-<name>-XXXXXX`). */
export function createTestDataDir(name: string): string {
  const artifacts = testArtifactsDir();
  const parent = artifacts ? path.join(artifacts, 'data') : os.tmpdir();
  fs.mkdirSync(parent, { recursive: true });
  return fs.mkdtempSync(path.join(parent, `switchyard-${name.replace(/[^\w.-]/g, '_')}-`));
}

/** Removes a test data directory, unless the run keeps its artifacts for the scan. */
export function removeTestDataDir(dir: string): void {
  if (testArtifactsDir()) return;
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A file under `<artifacts>/<kind>/` to append to; undefined when the run keeps nothing. */
export function artifactFile(kind: 'logs' | 'webhooks', name: string): string | undefined {
  const artifacts = testArtifactsDir();
  if (!artifacts) return undefined;
  const dir = path.join(artifacts, kind);
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name.replace(/[^\w.-]/g, '_')}-${process.pid}.log`);
}
