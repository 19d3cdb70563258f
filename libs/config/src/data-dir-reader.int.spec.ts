import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { holdDataDirReader, runningDataDirReader } from './data-dir-reader';

let parent: string;
beforeEach(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-reader-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(parent, { recursive: true, force: true });
});

it('creates a missing data directory 0700 whatever the umask, and warns of nothing on the next start', () => {
  const dataDir = path.join(parent, 'data');
  const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const umask = process.umask(0o022);
  try {
    const release = holdDataDirReader(dataDir, 'embedded');
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(runningDataDirReader(dataDir)).toMatchObject({ pid: process.pid, runtime: 'embedded' });
    release();
    holdDataDirReader(dataDir, 'embedded')();
  } finally {
    process.umask(umask);
  }
  expect(warnings).not.toHaveBeenCalled();
});
