/**
 * The vault cards a checkout session holds and their sealed security codes — on purpose NOT an event-sourced table:
 * a security code may be kept only until the payment it is for (PCI DSS 3.2.2 allows it before authorization, never
 * after), so it must be deletable for real, which an append-only log is not. One row per vault card the session
 * attached and has not given away: written before the card's event is appended (a card whose append fails is
 * removed with its row), deleted when the session is used, deleted, or expires. The sealed code is opened only with
 * the card's own data key (`CardVault.openWithCard`), so it dies with the card. A stored payment method chosen in
 * the browser has a row too (`storedPaymentMethod`): its security code lives exactly as long, but the card is the
 * merchant's, never removed with the session.
 */
import type Database from 'better-sqlite3';

export interface CheckoutSessionSecret {
  readonly sessionId: string;
  readonly merchantAccountId: string;
  readonly cardId: string;
  /** Null when the buyer gave no security code. */
  readonly sealedSecurityCode: string | null;
  /** The session's expiry when the row was written; the sweep checks the session's stream before acting on it. */
  readonly expiresAt: string;
  /** True: `cardId` is a stored payment method's, kept in the vault whatever becomes of the session. */
  readonly storedPaymentMethod: boolean;
}

interface SecretRecord {
  session_id: string;
  merchant_account_id: string;
  card_id: string;
  sealed_security_code: string | null;
  expires_at: string;
  stored_payment_method: number;
}

export class CheckoutSessionSecrets {
  private readonly insert: Database.Statement<[SecretRecord]>;
  private readonly bySession: Database.Statement<[string], SecretRecord>;
  private readonly expiredBefore: Database.Statement<[string], { session_id: string }>;
  private readonly removeOne: Database.Statement<[string, string]>;
  private readonly removeAll: Database.Statement<[string]>;
  private readonly extend: Database.Statement<[string, string]>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS checkout_session_secrets (
        session_id TEXT NOT NULL, merchant_account_id TEXT NOT NULL, card_id TEXT NOT NULL, sealed_security_code TEXT,
        expires_at TEXT NOT NULL, stored_payment_method INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, card_id));
      CREATE INDEX IF NOT EXISTS checkout_session_secrets_by_expiry ON checkout_session_secrets (expires_at);`);
    // Tables written before stored payment methods could be chosen hold typed cards only: 0 is right for their rows.
    const columns = db.prepare('PRAGMA table_info(checkout_session_secrets)').all() as { name: string }[];
    if (!columns.some((column) => column.name === 'stored_payment_method')) {
      db.exec('ALTER TABLE checkout_session_secrets ADD COLUMN stored_payment_method INTEGER NOT NULL DEFAULT 0');
    }
    // The same stored method chosen again in the same session replaces its row: the code typed last counts.
    this.insert = db.prepare(
      `INSERT INTO checkout_session_secrets
         (session_id, merchant_account_id, card_id, sealed_security_code, expires_at, stored_payment_method)
       VALUES (@session_id, @merchant_account_id, @card_id, @sealed_security_code, @expires_at, @stored_payment_method)
       ON CONFLICT (session_id, card_id) DO UPDATE
         SET sealed_security_code = excluded.sealed_security_code, expires_at = excluded.expires_at`,
    );
    this.bySession = db.prepare('SELECT * FROM checkout_session_secrets WHERE session_id = ?');
    this.expiredBefore = db.prepare(
      'SELECT DISTINCT session_id FROM checkout_session_secrets WHERE expires_at <= ? LIMIT 500',
    );
    this.removeOne = db.prepare('DELETE FROM checkout_session_secrets WHERE session_id = ? AND card_id = ?');
    this.removeAll = db.prepare('DELETE FROM checkout_session_secrets WHERE session_id = ?');
    this.extend = db.prepare('UPDATE checkout_session_secrets SET expires_at = ? WHERE session_id = ?');
  }

  keep(secret: CheckoutSessionSecret): void {
    this.insert.run({
      session_id: secret.sessionId,
      merchant_account_id: secret.merchantAccountId,
      card_id: secret.cardId,
      sealed_security_code: secret.sealedSecurityCode,
      expires_at: secret.expiresAt,
      stored_payment_method: secret.storedPaymentMethod ? 1 : 0,
    });
  }

  /** Every card row of the session (normally one; two while a replacement is being attached). */
  of(sessionId: string): CheckoutSessionSecret[] {
    return this.bySession.all(sessionId).map(toSecret);
  }

  /** Sessions with rows whose expiry is at or before `cutoff` (ISO-8601 UTC), a bounded batch. */
  sessionsExpiredBy(cutoff: string): string[] {
    return this.expiredBefore.all(cutoff).map((row) => row.session_id);
  }

  forget(sessionId: string, cardId: string): void {
    this.removeOne.run(sessionId, cardId);
  }

  forgetSession(sessionId: string): void {
    this.removeAll.run(sessionId);
  }

  /** The session's expiry moved (an update with `expires_in`). */
  expireAt(sessionId: string, expiresAt: string): void {
    this.extend.run(expiresAt, sessionId);
  }
}

function toSecret(record: SecretRecord): CheckoutSessionSecret {
  return {
    sessionId: record.session_id,
    merchantAccountId: record.merchant_account_id,
    cardId: record.card_id,
    sealedSecurityCode: record.sealed_security_code,
    expiresAt: record.expires_at,
    storedPaymentMethod: record.stored_payment_method === 1,
  };
}
