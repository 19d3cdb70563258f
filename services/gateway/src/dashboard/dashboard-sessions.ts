/**
 * Dashboard sessions, kept on the server: the cookie holds only a random id (256 bits); the record — who, the CSRF
 * token, when it started and was last used — is in the gateway's key-value store (process memory when embedded, Redis
 * shared by every gateway when distributed), under the SHA-256 of the id, so a copy of the store holds no usable
 * session id. A session ends when unused for the idle timeout or at its maximum age, whichever comes first; the store's
 * expiry drops the record then, and every read checks both times itself too.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KeyValueStore } from '@switchyard/kv';
import type { DashboardSettings } from './dashboard-settings';

export interface DashboardSession {
  readonly userId: string;
  /** Sent back by the browser in `x-csrf-token` on every state-changing request. */
  readonly csrfToken: string;
  /** ms since the epoch */
  readonly createdAt: number;
  readonly lastSeenAt: number;
}

/** A session's last use is written back at most this often (not on every request), so its idle end moves by steps this size. */
const TOUCH_EVERY_MS = 15_000;

const randomToken = (): string => randomBytes(32).toString('base64url');
const keyOf = (id: string): string => `dashboard-session:${createHash('sha256').update(id).digest('base64url')}`;
const isSessionId = (id: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(id);

export class DashboardSessions {
  constructor(
    private readonly store: KeyValueStore,
    private readonly settings: Pick<DashboardSettings, 'idleTimeoutMs' | 'maxAgeMs'>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  async create(userId: string): Promise<{ id: string; session: DashboardSession }> {
    const now = this.now();
    const id = randomToken();
    const session: DashboardSession = { userId, csrfToken: randomToken(), createdAt: now, lastSeenAt: now };
    await this.save(id, session);
    return { id, session };
  }

  /** The session, marked as used now; null when there is none or it has ended (and then it is removed). */
  async use(id: string): Promise<DashboardSession | null> {
    if (!isSessionId(id)) return null;
    const stored = await this.store.get(keyOf(id));
    const session = stored === null ? null : parseSession(stored);
    if (!session) return null;
    const now = this.now();
    if (now >= this.endOf(session)) {
      await this.store.delete(keyOf(id));
      return null;
    }
    if (now - session.lastSeenAt < TOUCH_EVERY_MS) return session;
    const touched = { ...session, lastSeenAt: now };
    await this.save(id, touched);
    return touched;
  }

  async end(id: string): Promise<void> {
    if (isSessionId(id)) await this.store.delete(keyOf(id));
  }

  /** When the session ends unless used again: its idle end, or its maximum age if sooner. */
  endOf(session: DashboardSession): number {
    return Math.min(session.lastSeenAt + this.settings.idleTimeoutMs, session.createdAt + this.settings.maxAgeMs);
  }

  private async save(id: string, session: DashboardSession): Promise<void> {
    const ttlMs = Math.max(1, this.endOf(session) - this.now());
    await this.store.set(keyOf(id), JSON.stringify(session), { ttlMs });
  }
}

function parseSession(stored: string): DashboardSession | null {
  try {
    const value = JSON.parse(stored) as Partial<DashboardSession>;
    if (
      typeof value.userId !== 'string' ||
      typeof value.csrfToken !== 'string' ||
      typeof value.createdAt !== 'number' ||
      typeof value.lastSeenAt !== 'number'
    )
      return null;
    return {
      userId: value.userId,
      csrfToken: value.csrfToken,
      createdAt: value.createdAt,
      lastSeenAt: value.lastSeenAt,
    };
  } catch {
    return null;
  }
}
