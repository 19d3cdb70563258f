/**
 * The demo checkout's "merchant backend" (`/demo/checkout`, embedded runtime only): what a merchant's server does
 * for a browser checkout. It opens a checkout session, makes sure the merchant account can take cards, signs an embed
 * token pinned to the amount and currency and bound to the session, and reads the resulting transaction back with
 * server-side credentials. The buyer's browser then attaches the card to the session through the secure fields
 * (frames served by the service, on another origin than the merchant page) and pays with the embed token.
 *
 * Its API key pair (role `integration`, which grants `embed`, limited to the `default` merchant account) is created
 * on the first checkout rather than at start-up, so a runtime whose demo is never opened writes nothing for it; the
 * private key is generated here and lives only in this process's memory, as a `KeyObject` that is never exported,
 * logged or stored. Key pairs left by earlier starts are unusable (their private keys are gone) and are deleted.
 */
import { isIP } from 'node:net';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import type { Settings } from '@switchyard/config';
import {
  checkoutSessionCreateSchema,
  checkoutSessionPatterns,
  DEFAULT_MERCHANT_ACCOUNT_ID,
  paymentServiceCreateSchema,
  paymentServicePatterns,
  transactionsPatterns,
  type CheckoutSession,
  type PaymentService,
  type PaymentServiceListRequest,
  type Transaction,
} from '@switchyard/contracts';
import type { IdentityService } from '@switchyard/identity';
import type { RpcClient } from '@switchyard/rpc';
import { SignJWT } from 'jose';

/** The demo pays 12.99 USD: an amount the card simulator authorizes (docs/simulator.md). */
export const DEMO_AMOUNT = 1299;
export const DEMO_CURRENCY = 'USD';
export const DEMO_KEY_DISPLAY_NAME = 'Demo checkout (embedded runtime)';
export const DEMO_CONNECTION_DISPLAY_NAME = 'Demo cards';
/** How long a demo checkout session, and the embed token bound to it, stay usable. */
export const DEMO_SESSION_SECONDS = 15 * 60;
/** Sessions whose transactions the demo backend reads back; the oldest are forgotten past this. */
const REMEMBERED_SESSIONS = 10_000;

/** What `POST /demo/checkout/session` answers the merchant page. */
export interface DemoCheckoutSession {
  readonly sessionId: string;
  /** The embed token: scope `embed`, amount and currency pinned, bound to the session. */
  readonly token: string;
  /** Where the secure fields are served (another origin than the merchant page). */
  readonly serviceUrl: string;
  readonly amount: number;
  readonly currency: string;
  readonly expiresAt: string;
}

/** What `GET /demo/checkout/transactions/{id}` answers: the transaction as the merchant's server reads it. */
export interface DemoTransaction {
  readonly id: string;
  readonly status: string;
  readonly amount: number;
  readonly currency: string;
}

/**
 * DEMO_CHECKOUT when set; unset, on only where nobody else can reach it — the HTTP server bound to loopback (`HOST`
 * 127.0.0.1, the default, `localhost` or `::1`) — and never with NODE_ENV=production (issue 22, item 7). The demo
 * mints embed tokens for anyone who asks: on a public interface it would be a free payment page.
 */
export const demoCheckoutEnabled = (settings: Pick<Settings, 'DEMO_CHECKOUT' | 'NODE_ENV' | 'HOST'>): boolean =>
  settings.DEMO_CHECKOUT ?? (settings.NODE_ENV !== 'production' && isLoopbackHost(settings.HOST));

function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

export class DemoCheckout {
  /** Issued sessions, oldest first: the backend reads back only the transactions its own checkouts made. */
  private readonly sessions = new Set<string>();
  /** Serializes "find or create the demo connection", so two first checkouts do not both create one. */
  private connectionReady: Promise<void> = Promise.resolve();

  /** The demo's signing key, made on the first checkout. */
  private signer: Promise<DemoSigner> | null = null;

  constructor(
    private readonly identity: IdentityService,
    private readonly rpc: RpcClient,
    /** Asked on each request: the runtime knows where it listens only once it does. */
    private readonly serviceUrlOf: () => string,
  ) {}

  serviceUrl(): string {
    return this.serviceUrlOf().replace(/\/+$/, '');
  }

  /** A checkout session of `default` for the demo amount, and the embed token the merchant page pays with. */
  async createSession(): Promise<DemoCheckoutSession> {
    await this.ensureCardConnection();
    const session = await this.rpc.call<CheckoutSession>(checkoutSessionPatterns.create, {
      merchant_account_id: DEFAULT_MERCHANT_ACCOUNT_ID,
      body: checkoutSessionCreateSchema.parse({
        amount: DEMO_AMOUNT,
        currency: DEMO_CURRENCY,
        expires_in: DEMO_SESSION_SECONDS,
      }),
    });
    this.remember(session.id);
    const { kid, privateKey } = await this.demoSigner();
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      scopes: ['embed'],
      embed: { amount: DEMO_AMOUNT, currency: DEMO_CURRENCY },
      checkout_session_id: session.id,
    })
      .setProtectedHeader({ alg: 'ES512', typ: 'JWT', kid })
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(Math.max(now + 60, Math.floor(Date.parse(session.expires_at) / 1000)))
      .setJti(randomUUID())
      .sign(privateKey);
    return {
      sessionId: session.id,
      token,
      serviceUrl: this.serviceUrl(),
      amount: DEMO_AMOUNT,
      currency: DEMO_CURRENCY,
      expiresAt: session.expires_at,
    };
  }

  /** The transaction a demo checkout made; any other id is not found. */
  async transaction(id: string): Promise<DemoTransaction> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw ApiError.notFound();
    const transaction = await this.rpc.call<Transaction>(transactionsPatterns.get, {
      merchant_account_id: DEFAULT_MERCHANT_ACCOUNT_ID,
      transaction_id: id,
    });
    const sessionId = (transaction as { checkout_session_id?: string | null }).checkout_session_id;
    if (!sessionId || !this.sessions.has(sessionId)) throw ApiError.notFound();
    return {
      id: transaction.id,
      status: transaction.status,
      amount: transaction.amount,
      currency: transaction.currency,
    };
  }

  /** The demo's API key pair: made on first use (deleting those of earlier starts); a failure is tried again next time. */
  demoSigner(): Promise<DemoSigner> {
    this.signer ??= createDemoSigner(this.identity).catch((error: unknown) => {
      this.signer = null;
      throw error;
    });
    return this.signer;
  }

  private remember(sessionId: string): void {
    this.sessions.add(sessionId);
    if (this.sessions.size > REMEMBERED_SESSIONS) this.sessions.delete(this.sessions.values().next().value as string);
  }

  private ensureCardConnection(): Promise<void> {
    const next = this.connectionReady.catch(() => undefined).then(() => this.findOrCreateCardConnection());
    this.connectionReady = next;
    return next;
  }

  /** `default` takes cards through the built-in simulator: an active mock-card connection, else "Demo cards" is created. */
  private async findOrCreateCardConnection(): Promise<void> {
    let cursor: string | null = null;
    do {
      const request: PaymentServiceListRequest = {
        merchant_account_id: DEFAULT_MERCHANT_ACCOUNT_ID,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      };
      const page: { items: PaymentService[]; next_cursor: string | null } = await this.rpc.call(
        paymentServicePatterns.list,
        request,
      );
      if (
        page.items.some(
          (service) =>
            service.payment_service_definition_id === 'mock-card' &&
            service.active &&
            service.accepted_currencies.includes(DEMO_CURRENCY),
        )
      )
        return;
      cursor = page.next_cursor;
    } while (cursor);
    await this.rpc.call(paymentServicePatterns.create, {
      merchant_account_id: DEFAULT_MERCHANT_ACCOUNT_ID,
      body: paymentServiceCreateSchema.parse({
        display_name: DEMO_CONNECTION_DISPLAY_NAME,
        payment_service_definition_id: 'mock-card',
        fields: [{ key: 'merchant_id', value: 'demo-checkout' }],
        accepted_currencies: [DEMO_CURRENCY],
        accepted_countries: ['US', 'GB', 'DE', 'FR', 'IE', 'NL'],
      }),
    });
  }
}

interface DemoSigner {
  readonly apiKeyPairId: string;
  readonly kid: string;
  /** Never exported: the private key exists only as this object. */
  readonly privateKey: KeyObject;
}

async function createDemoSigner(identity: IdentityService): Promise<DemoSigner> {
  for (const stale of await staleDemoKeyPairs(identity)) await identity.apiKeyPairs.delete(stale, { kind: 'operator' });
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const created = await identity.apiKeyPairs.create(
    {
      display_name: DEMO_KEY_DISPLAY_NAME,
      roles: ['integration'],
      merchant_account_ids: [DEFAULT_MERCHANT_ACCOUNT_ID],
      public_key: publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
    },
    { kind: 'operator' },
  );
  return { apiKeyPairId: created.id, kid: created.kid, privateKey };
}

/** Demo key pairs of earlier starts, by display name. */
async function staleDemoKeyPairs(identity: IdentityService): Promise<string[]> {
  const stale: string[] = [];
  let cursor: string | null = null;
  do {
    const page = identity.apiKeyPairs.list({ limit: 100, ...(cursor ? { cursor } : {}) });
    stale.push(...page.items.filter((pair) => pair.display_name === DEMO_KEY_DISPLAY_NAME).map((pair) => pair.id));
    cursor = page.next_cursor;
  } while (cursor);
  return stale;
}
