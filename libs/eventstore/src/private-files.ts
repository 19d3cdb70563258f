/**
 * DATA_DIR holds card vault keys, encrypted secrets and every payment's history: its files are 0600 and the
 * directory, when the service creates it, 0700. Modes are set with chmod after creation, so the process umask can
 * neither widen nor narrow them.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` 0700 when missing. An existing directory is the operator's: a wider one is left as it is, with a
 * process warning (a shared mount may need it so), since the files inside are 0600 either way.
 */
export function ensurePrivateDirectory(dir: string): void {
  let mode: number;
  try {
    mode = fs.statSync(dir).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    fs.chmodSync(dir, PRIVATE_DIRECTORY_MODE);
    return;
  }
  if ((mode & 0o077) !== 0) {
    process.emitWarning(`data directory ${dir} has mode ${mode.toString(8)}: other users can list it; chmod 700 it`, {
      code: 'SWITCHYARD_DATA_DIR_MODE',
    });
  }
}

/**
 * Makes `file` exist with mode 0600 (narrowing one an older version left wider). SQLite gives a database's -wal and
 * -shm files the database file's mode, so creating the database this way before SQLite opens it covers those too.
 */
export function ensurePrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  fs.chmodSync(file, PRIVATE_FILE_MODE);
}

/** A SQLite database's path, created 0600 in a private directory, with any -wal or -shm left from before narrowed. */
export function privateDatabaseFile(dataDir: string, fileName: string): string {
  ensurePrivateDirectory(dataDir);
  const file = path.join(dataDir, fileName);
  ensurePrivateFile(file);
  for (const sidecar of [`${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      fs.chmodSync(sidecar, PRIVATE_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return file;
}
