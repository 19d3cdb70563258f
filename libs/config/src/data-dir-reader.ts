/**
 * Which running process reads a data directory's identity store (API keys, users, merchant accounts): it holds
 * `DATA_DIR/identity.pid` while it runs. The operator CLI writes straight into that store and reads the file to say
 * when no running server will see what it wrote — the first-hour trap of a key made under another `DATA_DIR` (or,
 * for the default `./data`, from another working directory) than the server's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDirectory } from '@switchyard/eventstore/src/private-files';

export const IDENTITY_READER_FILE = 'identity.pid';

export interface DataDirReader {
  readonly pid: number;
  readonly runtime: string;
  readonly started_at: string;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Writes the file for this process; the returned function removes it (if it is still this process's). */
export function holdDataDirReader(dataDir: string, runtime: string): () => void {
  const file = path.join(dataDir, IDENTITY_READER_FILE);
  const reader: DataDirReader = { pid: process.pid, runtime, started_at: new Date().toISOString() };
  // Often the first thing a start writes: the directory is created 0700 here as the stores would create it.
  ensurePrivateDirectory(dataDir);
  fs.writeFileSync(file, `${JSON.stringify(reader)}\n`, { mode: 0o600 });
  return () => {
    if (runningDataDirReader(dataDir)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
}

/** The process that reads the directory now, or null: no file, an unreadable one, or one left by a dead process. */
export function runningDataDirReader(dataDir: string): DataDirReader | null {
  try {
    const reader = JSON.parse(fs.readFileSync(path.join(dataDir, IDENTITY_READER_FILE), 'utf8')) as DataDirReader;
    return Number.isInteger(reader.pid) && reader.pid > 0 && isAlive(reader.pid) ? reader : null;
  } catch {
    return null;
  }
}
