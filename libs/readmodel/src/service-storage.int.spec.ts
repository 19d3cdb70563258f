import fs from 'node:fs';
import path from 'node:path';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import { openServiceStorage } from './service-storage';

const modeOf = (file: string): number => fs.statSync(file).mode & 0o777;

describe('the files a service keeps under DATA_DIR', () => {
  let parent: string;
  let previousUmask: number;
  beforeEach(() => {
    parent = createTestDataDir('private-storage');
    previousUmask = process.umask(0); // the most permissive umask: the modes must not come from it
  });
  afterEach(() => {
    process.umask(previousUmask);
    removeTestDataDir(parent);
  });

  it('are 0600 (the SQLite file and its -wal and -shm) in a directory the service creates 0700, whatever the umask', async () => {
    const dataDir = path.join(parent, 'data');
    const storage = openServiceStorage('transactions', { dataDir });
    try {
      await storage.store.append('probe-1', [{ type: 'Probed', data: {} }], { expectedRevision: 'no_stream' });
      expect(modeOf(dataDir)).toBe(0o700);
      for (const name of ['transactions.db', 'transactions.db-wal', 'transactions.db-shm']) {
        expect({ name, mode: modeOf(path.join(dataDir, name)).toString(8) }).toEqual({ name, mode: '600' });
      }
    } finally {
      await storage.close();
    }
  });

  it('are narrowed to 0600 when an older version left them wider; a wider existing directory is a warning, not a failure', async () => {
    const dataDir = path.join(parent, 'shared');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    const first = openServiceStorage('identity', { dataDir });
    await first.close();
    fs.chmodSync(path.join(dataDir, 'identity.db'), 0o644);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const storage = openServiceStorage('identity', { dataDir });
      await storage.close();
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(modeOf(path.join(dataDir, 'identity.db'))).toBe(0o600);
    expect(modeOf(dataDir)).toBe(0o755);
    expect(warnings.some((message) => message.includes(dataDir) && message.includes('755'))).toBe(true);
  });
});
