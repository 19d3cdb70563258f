import type Database from 'better-sqlite3';
import { keysetPage, type Page, type PageQuery } from '@switchyard/api';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import { emailKey } from './user-email';
import type { UserEvent } from './user';

export interface UserRow {
  readonly id: string;
  readonly email: string;
  readonly displayName: string;
  readonly roleIds: readonly string[];
  readonly active: boolean;
  /** Whether the operator has set a dashboard password (the hash itself stays in `user_passwords`). */
  readonly hasPassword: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface UserRecord {
  id: string;
  email: string;
  email_key: string;
  display_name: string;
  role_ids: string;
  active: number;
  created_at: string;
  updated_at: string;
  sort_key: string;
  has_password: number;
}

/**
 * Dashboard users as the operator sees them, projected from `user-<uuid>` streams. `email_key` is indexed but not
 * UNIQUE: uniqueness is decided on the write side (`user-email.ts`); a constraint here could only wedge the projection.
 * Password hashes sit in a table of their own (`user_passwords`), read only by sign-in: no user row, list or RPC
 * answer can carry one.
 */
export class UsersReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], UserRecord>;
  private readonly byEmailKey: Database.Statement<[string], UserRecord>;
  private readonly pageAfter: Database.Statement<[string, number], UserRecord>;
  private readonly pageBefore: Database.Statement<[string, number], UserRecord>;
  private readonly everyone: Database.Statement<[], UserRecord>;
  private readonly passwordOf: Database.Statement<[string], { password_hash: string }>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS users (
        id TEXT PRIMARY KEY, email TEXT NOT NULL, email_key TEXT NOT NULL, display_name TEXT NOT NULL,
        role_ids TEXT NOT NULL, active INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        sort_key TEXT NOT NULL UNIQUE);
      CREATE INDEX IF NOT EXISTS users_email_key ON users (email_key);
      CREATE TABLE IF NOT EXISTS user_passwords (user_id TEXT PRIMARY KEY, password_hash TEXT NOT NULL, set_at TEXT NOT NULL);`);
    const select =
      'SELECT users.*, EXISTS (SELECT 1 FROM user_passwords WHERE user_id = users.id) AS has_password FROM users';
    this.byId = db.prepare(`${select} WHERE id = ?`);
    this.byEmailKey = db.prepare(`${select} WHERE email_key = ? ORDER BY sort_key LIMIT 1`);
    this.pageAfter = db.prepare(`${select} WHERE sort_key > ? ORDER BY sort_key LIMIT ?`);
    this.pageBefore = db.prepare(`${select} WHERE sort_key < ? ORDER BY sort_key DESC LIMIT ?`);
    this.everyone = db.prepare(`${select} ORDER BY sort_key`);
    this.passwordOf = db.prepare('SELECT password_hash FROM user_passwords WHERE user_id = ?');

    const insert = db.prepare(
      `INSERT INTO users (id, email, email_key, display_name, role_ids, active, created_at, updated_at, sort_key)
       VALUES (@id, @email, @emailKey, @displayName, @roleIds, 1, @at, @at, @sortKey)`,
    );
    const update = db.prepare(
      `UPDATE users SET display_name = coalesce(@displayName, display_name), active = coalesce(@active, active),
         role_ids = coalesce(@roleIds, role_ids), updated_at = @at WHERE id = @id`,
    );

    const setPassword = db.prepare(
      `INSERT INTO user_passwords (user_id, password_hash, set_at) VALUES (@id, @passwordHash, @at)
       ON CONFLICT (user_id) DO UPDATE SET password_hash = excluded.password_hash, set_at = excluded.set_at`,
    );

    this.projection = {
      name: 'users',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as UserEvent;
        switch (event.type) {
          case 'UserCreated':
            insert.run({
              id: event.data.id,
              email: event.data.email,
              emailKey: emailKey(event.data.email),
              displayName: event.data.displayName,
              roleIds: JSON.stringify(event.data.roleIds),
              at: event.data.at,
              sortKey: `${event.data.at}|${event.data.id}`,
            });
            return;
          case 'UserUpdated':
            update.run({
              id: event.data.id,
              displayName: event.data.displayName ?? null,
              active: event.data.active === undefined ? null : event.data.active ? 1 : 0,
              roleIds: event.data.roleIds === undefined ? null : JSON.stringify(event.data.roleIds),
              at: event.data.at,
            });
            return;
          case 'UserPasswordSet':
            setPassword.run({ id: event.data.id, passwordHash: event.data.passwordHash, at: event.data.at });
            return;
          default:
            return;
        }
      },
    };
  }

  find(id: string): UserRow | null {
    const row = this.byId.get(id);
    return row ? toRow(row) : null;
  }

  findByEmail(email: string): UserRow | null {
    const row = this.byEmailKey.get(emailKey(email));
    return row ? toRow(row) : null;
  }

  /** The user's dashboard password hash; null when none was set. */
  passwordHash(userId: string): string | null {
    return this.passwordOf.get(userId)?.password_hash ?? null;
  }

  /** Oldest first. */
  list(query: PageQuery): Page<UserRow> {
    const page = keysetPage<UserRecord>(
      query,
      (row) => row.sort_key,
      (key, count) => this.pageAfter.all(key ?? '', count),
      (key, count) => this.pageBefore.all(key, count),
    );
    return { ...page, items: page.items.map(toRow) };
  }

  /** Oldest first; for the operator CLI, where the set is small. */
  all(): UserRow[] {
    return this.everyone.all().map(toRow);
  }
}

function toRow(row: UserRecord): UserRow {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    roleIds: JSON.parse(row.role_ids) as string[],
    active: row.active === 1,
    hasPassword: row.has_password === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
