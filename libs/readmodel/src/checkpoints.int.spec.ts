import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteCheckpointStore } from './checkpoints';

describe('SqliteCheckpointStore', () => {
  let dir: string;
  let db: Database.Database;
  const statements: string[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'checkpoints-'));
    statements.length = 0;
    db = new Database(path.join(dir, 'service.db'), { verbose: (sql) => void statements.push(String(sql)) });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const saves = () => statements.filter((sql) => /^(INSERT INTO checkpoints|PRAGMA synchronous =)/.test(sql));

  it('saves with the connection as it is (FULL: an fsync per save) by default', () => {
    const checkpoints = new SqliteCheckpointStore(db);
    statements.length = 0;
    checkpoints.save('relay:transactions.events', '42');
    expect(saves()).toStrictEqual([expect.stringMatching(/^INSERT INTO checkpoints/)]);
    expect(checkpoints.load('relay:transactions.events')).toBe('42');
  });

  it('with deferSync, saves at synchronous NORMAL (no fsync of its own) and puts FULL back', () => {
    const checkpoints = new SqliteCheckpointStore(db, { deferSync: true });
    statements.length = 0;
    checkpoints.save('relay:transactions.events', '42');
    checkpoints.save('relay:transactions.events', '43');
    expect(saves()).toStrictEqual([
      'PRAGMA synchronous = 1',
      expect.stringMatching(/^INSERT INTO checkpoints/),
      'PRAGMA synchronous = 2',
      'PRAGMA synchronous = 1',
      expect.stringMatching(/^INSERT INTO checkpoints/),
      'PRAGMA synchronous = 2',
    ]);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(checkpoints.load('relay:transactions.events')).toBe('43');
  });

  it('with deferSync on a connection already at NORMAL, leaves the setting alone', () => {
    db.pragma('synchronous = NORMAL');
    const checkpoints = new SqliteCheckpointStore(db, { deferSync: true });
    statements.length = 0;
    checkpoints.save('relay:vault.events', '7');
    expect(saves()).toStrictEqual([expect.stringMatching(/^INSERT INTO checkpoints/)]);
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('loads and saves several checkpoints in one statement each, the names it has not seen as undefined', () => {
    const checkpoints = new SqliteCheckpointStore(db);
    checkpoints.save('projection:a', '3');
    statements.length = 0;
    checkpoints.saveAll(['projection:b', 'projection:c'], '7');
    expect(checkpoints.loadAll(['projection:a', 'projection:b', 'projection:c', 'projection:d'])).toStrictEqual(
      new Map([
        ['projection:a', '3'],
        ['projection:b', '7'],
        ['projection:c', '7'],
        ['projection:d', undefined],
      ]),
    );
    expect(statements).toHaveLength(2);
    checkpoints.saveAll([], '9');
    expect(checkpoints.loadAll([])).toStrictEqual(new Map());
    expect(statements).toHaveLength(2);
  });
});
