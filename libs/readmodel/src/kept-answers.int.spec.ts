import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeptAnswers } from './kept-answers';

describe('KeptAnswers', () => {
  let dir: string;
  let db: BetterSqlite3.Database;
  let other: BetterSqlite3.Database;
  let reads: number;
  const names = (): { name: string }[] => {
    reads += 1;
    return db.prepare('SELECT name FROM rules ORDER BY name').all() as { name: string }[];
  };
  const insert = (connection: BetterSqlite3.Database, name: string) =>
    connection.prepare('INSERT INTO rules (name) VALUES (?)').run(name);

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kept-answers-'));
    db = new BetterSqlite3(path.join(dir, 'read-models.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE rules (name TEXT NOT NULL)');
    other = new BetterSqlite3(path.join(dir, 'read-models.db'));
    reads = 0;
  });
  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers from memory until the read model is told it changed', () => {
    const kept = new KeptAnswers<readonly { name: string }[]>(db);
    insert(db, 'a');
    expect(kept.get('all', names)).toEqual([{ name: 'a' }]);
    expect(kept.get('all', names)).toEqual([{ name: 'a' }]);
    expect(reads).toBe(1);

    insert(db, 'b'); // this connection's own write: the projection that makes it calls forget()
    kept.forget();
    expect(kept.get('all', names)).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(reads).toBe(2);
  });

  it("reads again after another connection's commit to the file (another process: a rebuild, a second writer)", () => {
    const kept = new KeptAnswers<readonly { name: string }[]>(db);
    expect(kept.get('all', names)).toEqual([]);
    insert(other, 'from elsewhere');
    expect(kept.get('all', names)).toEqual([{ name: 'from elsewhere' }]);
    expect(kept.get('all', names)).toEqual([{ name: 'from elsewhere' }]);
    expect(reads).toBe(2);
  });

  it('keeps nothing read inside a transaction, which may yet roll back', () => {
    const kept = new KeptAnswers<readonly { name: string }[]>(db);
    expect(() =>
      db.transaction(() => {
        insert(db, 'rolled back');
        expect(kept.get('all', names)).toEqual([{ name: 'rolled back' }]);
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    expect(kept.get('all', names)).toEqual([]);
    expect(reads).toBe(2);
  });

  it('hands out frozen answers, so that no caller changes what the next one gets', () => {
    const kept = new KeptAnswers<{ name: string; tags: string[] }[]>(db);
    const answer = kept.get('x', () => [{ name: 'a', tags: ['t', 's'] }]);
    expect(() => answer.push({ name: 'b', tags: [] })).toThrow(TypeError);
    expect(() => {
      answer[0]!.name = 'changed';
    }).toThrow(TypeError);
    expect(() => answer[0]!.tags.sort()).toThrow(TypeError);
    expect(kept.get('x', () => [])).toEqual([{ name: 'a', tags: ['t', 's'] }]);
  });

  it('keeps answers per key, at most `limit` of them (the oldest goes first)', () => {
    const kept = new KeptAnswers<string>(db, { limit: 2 });
    let computed = 0;
    const answer = (key: string) => kept.get(key, () => `${key}:${(computed += 1)}`);
    expect([answer('a'), answer('b'), answer('a')]).toEqual(['a:1', 'b:2', 'a:1']);
    expect(answer('c')).toBe('c:3'); // a is the oldest kept: it goes
    expect([answer('b'), answer('a')]).toEqual(['b:2', 'a:4']);
  });

  it('keeps an answer of null or undefined like any other', () => {
    const kept = new KeptAnswers<string | null | undefined>(db);
    let computed = 0;
    const nothing = () => {
      computed += 1;
      return null;
    };
    expect([kept.get('n', nothing), kept.get('n', nothing)]).toEqual([null, null]);
    expect(computed).toBe(1);
  });
});
