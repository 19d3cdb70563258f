/**
 * Checkout sessions (`checkout-session-<uuid>`): the merchant opens, reads, updates and deletes one; the buyer's
 * browser attaches card data to it (no token: the session id is the credential); a transaction claims it, once, and
 * pays with its card. The card number goes to the vault (a data key per card); the security code is sealed with the
 * card's key and kept only in `checkout_session_secrets` until the session is used, deleted, or expires. Instead of
 * a card the browser may choose one of the merchant's stored payment methods and type its security code again: the
 * code is kept the same way, the method is paid with as itself, and it never leaves the vault with the session.
 */
import { ApiError, type ErrorLocation } from '@switchyard/api';
import { detectScheme, type BinData } from '@switchyard/bin-data';
import {
  checkoutSessionPatterns,
  passesLuhn,
  type CheckoutSession,
  type CheckoutSessionCardDetails,
  type CheckoutSessionCardDetailsRequest,
  type CheckoutSessionCreateRequest,
  type CheckoutSessionFieldsRequest,
  type CheckoutSessionRef,
  type CheckoutSessionUpdateRequest,
} from '@switchyard/contracts';
import { appendEvents, asDomainEvent, DomainError, handleCommand } from '@switchyard/decider';
import { WrongExpectedRevisionError, type RecordedEvent } from '@switchyard/eventstore';
import type { RpcHandlers } from '@switchyard/rpc';
import { domainErrorMapper } from '@switchyard/service';
import type { VaultContext, VaultSlice } from '../vault-context';
import {
  checkoutSessionDecider,
  checkoutSessionStream,
  hasExpired,
  usableSession,
  usedCardOf,
  type CheckoutSessionCard,
  type CheckoutSessionCommand,
  type CheckoutSessionErrorCode,
  type CheckoutSessionEvent,
  type CheckoutSessionState,
} from './checkout-session';
import { CheckoutSessionSecrets } from './checkout-session-secrets';
import {
  paymentMethodGone,
  storedMethodCard,
  storedMethodCodePurpose,
  type StoredPaymentMethodLookup,
} from './checkout-session-stored-methods';
import { changesOf, detailsOf, toCheckoutSession } from './checkout-session-wire';
import { CheckoutSessionsReadModel, type CheckoutSessionView } from './checkout-sessions.read-model';

/** The card vault as this slice uses it (`CardVault`). */
export interface CheckoutSessionVault {
  store(
    merchantAccountId: string,
    card: { readonly number: string; readonly expirationDate: string },
  ): {
    readonly id: string;
    readonly scheme: string | null;
    readonly cardType: string | null;
    readonly bin: string;
    readonly last4: string;
    readonly expirationDate: string;
    readonly fingerprint: string;
  };
  reveal(merchantAccountId: string, id: string): { number: string; expirationDate: string } | null;
  find(merchantAccountId: string, id: string): { readonly id: string } | null;
  remove(merchantAccountId: string, id: string): void;
  sealWithCard(merchantAccountId: string, cardId: string, purpose: string, value: string): string;
  openWithCard(merchantAccountId: string, cardId: string, purpose: string, sealed: string): string | null;
}

export interface CheckoutSessionsDependencies {
  readonly vault: CheckoutSessionVault;
  /** Absent: a session takes typed cards only. */
  readonly storedPaymentMethods?: StoredPaymentMethodLookup;
  /** Card type, issuer country and name for the card summary; absent: null. */
  readonly binData?: BinData;
  /**
   * How long after a session's expiry `expireSessions` waits before removing its card: a claim decided an instant
   * before the expiry may still be reading it. Default 60 s.
   */
  readonly expiryGraceMs?: number;
}

/** What a transaction gets by claiming a session: the card, for the provider call only (never log, persist or emit it). */
export interface ClaimedCheckoutSession {
  readonly session: CheckoutSessionView;
  /** The vault card: from now on the transaction's, not the session's (a stored method: its id, the merchant's). */
  readonly cardId: string;
  readonly storedPaymentMethod: boolean;
  readonly card: { readonly number: string; readonly expirationDate: string; readonly securityCode?: string };
}

const SECURITY_CODE = 'security_code';
const MAX_CLAIM_ATTEMPTS = 5;

/** Where a refusal points: the session id in the path (the session's own routes), or the payment method of a payment. */
interface Where {
  readonly location: ErrorLocation;
  readonly pointer: string;
}
const inPath: Where = { location: 'path', pointer: '/session_id' };
const asPaymentMethod: Where = { location: 'body', pointer: '/payment_method/id' };

const refusalMessages: Record<CheckoutSessionErrorCode, string> = {
  checkout_session_not_found: 'The checkout session could not be found',
  checkout_session_exists: 'The checkout session already exists',
  checkout_session_expired: 'The checkout session has expired',
  checkout_session_used: 'The checkout session was already used by a transaction',
  checkout_session_without_card: 'No card was attached to the checkout session',
  checkout_session_holds_payment_method: 'The checkout session holds a stored payment method, which is stored already',
};
const fallback = domainErrorMapper({ checkout_session_exists: 409 });

/**
 * The session's refusals: on its own routes an unknown session is a 404, the rest a 400 naming the session; for a
 * payment every refusal is a 400 about `payment_method.id`.
 */
function rendered(error: unknown, where: Where): unknown {
  if (!(error instanceof DomainError) || !(error.code in refusalMessages)) return fallback(error);
  const code = error.code as CheckoutSessionErrorCode;
  if (code === 'checkout_session_exists') return fallback(error);
  if (code === 'checkout_session_not_found' && where === inPath) return ApiError.notFound();
  const message = refusalMessages[code];
  return ApiError.badRequest(message, [{ location: where.location, pointer: where.pointer, message, type: code }]);
}

export class CheckoutSessions implements VaultSlice {
  readonly readModel: CheckoutSessionsReadModel;
  private readonly secrets: CheckoutSessionSecrets;
  private readonly expiryGraceMs: number;

  constructor(
    private readonly context: VaultContext,
    private readonly deps: CheckoutSessionsDependencies,
  ) {
    this.readModel = new CheckoutSessionsReadModel(context.db);
    this.secrets = new CheckoutSessionSecrets(context.db);
    this.expiryGraceMs = deps.expiryGraceMs ?? 60_000;
  }

  get projection() {
    return this.readModel.projection;
  }

  /** A session of the merchant account (expired and used ones too); null when unknown, deleted, or another account's. */
  find(merchantAccountId: string, id: string): CheckoutSessionView | null {
    const session = this.readModel.find(id);
    return session && session.merchantAccountId === merchantAccountId ? session : null;
  }

  async create({
    merchant_account_id: merchantAccountId,
    body,
  }: CheckoutSessionCreateRequest): Promise<CheckoutSession> {
    const id = this.context.newId();
    const now = this.context.now();
    const expiresAt = new Date(now.getTime() + Math.round(body.expires_in * 1000)).toISOString();
    await this.handle(
      id,
      {
        type: 'CreateCheckoutSession',
        data: { id, merchantAccountId, details: detailsOf(body), expiresAt },
        metadata: { now: now.toISOString() },
      },
      inPath,
    );
    return this.get({ merchant_account_id: merchantAccountId, checkout_session_id: id });
  }

  get({ merchant_account_id: merchantAccountId, checkout_session_id: id }: CheckoutSessionRef): CheckoutSession {
    const session = this.find(merchantAccountId, id);
    if (!session) throw ApiError.notFound();
    return toCheckoutSession(session);
  }

  /** Replaces the details the body gives; `expires_in` counts again from now. An expired or used session does not change. */
  async update({
    merchant_account_id: merchantAccountId,
    checkout_session_id: id,
    body,
  }: CheckoutSessionUpdateRequest): Promise<CheckoutSession> {
    const now = this.context.now();
    const expiresAt =
      body.expires_in === undefined
        ? undefined
        : new Date(now.getTime() + Math.round(body.expires_in * 1000)).toISOString();
    await this.handle(
      id,
      {
        type: 'UpdateCheckoutSession',
        data: { id, merchantAccountId, changes: changesOf(body), ...(expiresAt !== undefined ? { expiresAt } : {}) },
        metadata: { now: now.toISOString() },
      },
      inPath,
    );
    if (expiresAt !== undefined) this.secrets.expireAt(id, expiresAt);
    return this.get({ merchant_account_id: merchantAccountId, checkout_session_id: id });
  }

  /** Deletes the session, then removes the card it still holds from the vault (a used session's card is its transaction's). */
  async delete({ merchant_account_id: merchantAccountId, checkout_session_id: id }: CheckoutSessionRef): Promise<void> {
    const { state } = await this.handle(
      id,
      {
        type: 'DeleteCheckoutSession',
        data: { id, merchantAccountId },
        metadata: { now: this.context.now().toISOString() },
      },
      inPath,
    );
    this.release(id, state);
  }

  /**
   * Attaches the buyer's card to the session, replacing (and removing) a card attached before. The card is in the
   * vault and its sealed security code in the secrets table before the event is appended; a refused append takes
   * both away again.
   */
  async attachFields({ checkout_session_id: id, body }: CheckoutSessionFieldsRequest): Promise<void> {
    if (body.payment_method.method === 'id') return this.attachStoredMethod(id, body.payment_method);
    const { number, expiration_date: expirationDate, security_code: securityCode } = body.payment_method;
    if (!passesLuhn(number)) {
      const message = 'is not a valid card number (Luhn check)';
      throw ApiError.badRequest('The card number is not valid', [
        { location: 'body', pointer: '/payment_method/number', message, type: 'invalid_card_number' },
      ]);
    }
    const now = this.context.now().toISOString();
    let session: ReturnType<typeof usableSession>;
    try {
      // Refused before anything is stored; decided again, on the stream's latest state, when the event is appended.
      session = usableSession(await this.state(id), id, now);
    } catch (error) {
      throw rendered(error, inPath);
    }
    const merchantAccountId = session.merchantAccountId;
    const stored = this.deps.vault.store(merchantAccountId, { number, expirationDate });
    let card: CheckoutSessionCard;
    try {
      const sealed =
        securityCode === undefined
          ? null
          : this.deps.vault.sealWithCard(merchantAccountId, stored.id, SECURITY_CODE, securityCode);
      const { expiresAt } = session;
      const row = { sessionId: id, merchantAccountId, cardId: stored.id, expiresAt, storedPaymentMethod: false };
      this.secrets.keep({ ...row, sealedSecurityCode: sealed });
      const bin = this.deps.binData?.lookup(number);
      card = {
        cardId: stored.id,
        scheme: stored.scheme ?? bin?.scheme ?? null,
        bin: stored.bin,
        last4: stored.last4,
        expirationDate: stored.expirationDate,
        fingerprint: stored.fingerprint,
        cardType: bin?.cardType ?? stored.cardType,
        issuerCountry: bin?.issuerCountry ?? null,
        issuerName: bin?.issuerName ?? null,
      };
    } catch (error) {
      this.removeCard(id, merchantAccountId, stored.id);
      throw error;
    }
    await this.attachCard(id, merchantAccountId, card, () => this.removeCard(id, merchantAccountId, stored.id));
  }

  /**
   * Attaches a stored payment method of the session's merchant account (usable: `succeeded`) with the security code
   * the buyer typed again, sealed with the stored card's key for this session only. Refused before anything is kept:
   * an unknown, deleted or unusable method is a 400 naming `payment_method.id`.
   */
  private async attachStoredMethod(id: string, method: { readonly id: string; readonly security_code?: string }) {
    let session: ReturnType<typeof usableSession>;
    try {
      session = usableSession(await this.state(id), id, this.context.now().toISOString());
    } catch (error) {
      throw rendered(error, inPath);
    }
    const merchantAccountId = session.merchantAccountId;
    const stored = this.storedMethods().usable(merchantAccountId, method.id);
    if (!this.deps.vault.find(merchantAccountId, stored.id)) throw paymentMethodGone();
    const code = method.security_code;
    const cardId = stored.id;
    const purpose = storedMethodCodePurpose(id);
    const sealed = code === undefined ? null : this.deps.vault.sealWithCard(merchantAccountId, cardId, purpose, code);
    const row = { sessionId: id, merchantAccountId, cardId, expiresAt: session.expiresAt, storedPaymentMethod: true };
    this.secrets.keep({ ...row, sealedSecurityCode: sealed });
    await this.attachCard(id, merchantAccountId, storedMethodCard(stored), () => this.secrets.forget(id, stored.id));
  }

  /**
   * Appends the attachment (decided again on the stream's latest state), then lets go of what this decision
   * replaced — only that: a concurrent attach's card is its own request's to keep or remove. A typed card replaced
   * leaves the vault; a stored method replaced loses only its security code (unless it was chosen again). A refused
   * append runs `undo`.
   */
  private async attachCard(id: string, merchantAccountId: string, card: CheckoutSessionCard, undo: () => void) {
    let attached: CheckoutSessionEvent | undefined;
    try {
      const now = this.context.now().toISOString();
      const command: CheckoutSessionCommand = { type: 'AttachCard', data: { id, card }, metadata: { now } };
      attached = (await this.append(id, command, inPath)).events[0];
    } catch (error) {
      undo();
      throw error;
    }
    if (attached?.type === 'CheckoutSessionCardAttached') {
      const { replacedCardId, replacedPaymentMethodId } = attached.data;
      if (replacedCardId) this.removeCard(id, merchantAccountId, replacedCardId);
      const chosenAgain = replacedPaymentMethodId === card.cardId;
      if (replacedPaymentMethodId && !chosenAgain) this.secrets.forget(id, replacedPaymentMethodId);
    }
    await this.context.catchUp();
  }

  /**
   * What BIN data says about the first 6 to 8 digits typed into the secure fields' card number frame (its
   * `card-details-changed` event). No token: the session id is the credential, so the session must be open — unknown
   * or deleted is a 404, expired or used a 400, as for attaching fields. Reads only; the digits are not kept.
   */
  async cardDetails({
    checkout_session_id: id,
    bin,
  }: CheckoutSessionCardDetailsRequest): Promise<CheckoutSessionCardDetails> {
    if (typeof bin !== 'string' || !/^\d{6,8}$/.test(bin)) {
      throw ApiError.badRequest('The bin must be 6 to 8 digits', [
        { location: 'query', pointer: '/bin', message: 'must be 6 to 8 digits', type: 'invalid_bin' },
      ]);
    }
    try {
      usableSession(await this.state(id), id, this.context.now().toISOString());
    } catch (error) {
      throw rendered(error, inPath);
    }
    const info = this.deps.binData?.lookup(bin);
    return {
      country: info?.issuerCountry ?? null,
      scheme: info?.scheme ?? detectScheme(bin),
      card_type: info?.cardType ?? null,
      additional_schemes: [],
    };
  }

  /**
   * Uses the session for `transactionId` and answers its card: the session must be the merchant account's, open,
   * unused and hold a card. `CheckoutSessionUsed` is appended with the revision the decision read, so of two
   * concurrent claims one wins and the other is refused (`checkout_session_used`). The sealed security code is
   * deleted once read; the vault card stays, now the transaction's. Refusals are 400s about `payment_method.id`.
   * `forStoring`: the card is to become a stored payment method (refused when the session holds one already).
   * `vetStoredMethod`: the caller's check of a stored method the session holds (whose it is), before it is used.
   */
  async claim(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    options: {
      readonly forStoring?: boolean;
      readonly vetStoredMethod?: (paymentMethodId: string) => void | Promise<void>;
    } = {},
  ): Promise<ClaimedCheckoutSession> {
    for (let attempt = 1; ; attempt += 1) {
      const recorded = await this.context.store.readStream(checkoutSessionStream(sessionId));
      const state = fold(recorded);
      const command: CheckoutSessionCommand = {
        type: 'UseCheckoutSession',
        data: { id: sessionId, merchantAccountId, transactionId, ...(options.forStoring ? { forStoring: true } : {}) },
        metadata: { now: this.context.now().toISOString() },
      };
      let events: readonly CheckoutSessionEvent[];
      try {
        events = checkoutSessionDecider.decide(command, state);
      } catch (error) {
        throw rendered(error, asPaymentMethod);
      }
      const used = events[0];
      if (used?.type !== 'CheckoutSessionUsed') throw new Error('UseCheckoutSession decided no CheckoutSessionUsed');
      const { cardId } = used.data;
      const storedPaymentMethod = state.status === 'open' && state.cardIsStoredPaymentMethod;
      // Checked before the session is used: a stored method that may no longer pay must not consume the session.
      if (storedPaymentMethod) {
        this.storedMethods().usable(merchantAccountId, cardId);
        await options.vetStoredMethod?.(cardId);
      }
      // Read before the session is used: a card the vault no longer has must not consume the session.
      const card = this.deps.vault.reveal(merchantAccountId, cardId);
      const sealed = this.secrets.of(sessionId).find((secret) => secret.cardId === cardId)?.sealedSecurityCode ?? null;
      const purpose = storedPaymentMethod ? storedMethodCodePurpose(sessionId) : SECURITY_CODE;
      const securityCode = sealed && this.deps.vault.openWithCard(merchantAccountId, cardId, purpose, sealed);
      if (!card) {
        // Replaced meanwhile (the new card's event is on the stream): decide again; else the card is gone.
        if (
          (await this.context.store.readStream(checkoutSessionStream(sessionId))).length !== recorded.length &&
          attempt < MAX_CLAIM_ATTEMPTS
        )
          continue;
        throw rendered(new DomainError('checkout_session_without_card', 'card gone'), asPaymentMethod);
      }
      try {
        await appendEvents(this.context.store, checkoutSessionStream(sessionId), [used], {
          expectedRevision: recorded.length - 1,
        });
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError && attempt < MAX_CLAIM_ATTEMPTS) continue;
        throw fallback(error);
      }
      this.secrets.forgetSession(sessionId);
      await this.context.catchUp();
      const session = this.readModel.find(sessionId);
      if (!session) throw new Error(`checkout session ${sessionId} missing from its read model after its use`);
      return {
        session,
        cardId,
        storedPaymentMethod,
        card: { number: card.number, expirationDate: card.expirationDate, ...(securityCode ? { securityCode } : {}) },
      };
    }
  }

  /**
   * For the service's timer: removes the cards and sealed security codes of sessions expired (more than the grace
   * period ago) and never used; a used session's leftover rows are deleted without touching its card. Answers how
   * many sessions were cleaned.
   */
  async expireSessions(): Promise<number> {
    const cutoff = new Date(this.context.now().getTime() - this.expiryGraceMs).toISOString();
    let cleaned = 0;
    for (const id of this.secrets.sessionsExpiredBy(cutoff)) {
      const state = await this.state(id);
      if (state.status === 'open' && !hasExpired(state.expiresAt, cutoff)) {
        this.secrets.expireAt(id, state.expiresAt); // extended by an update since the row was written
        continue;
      }
      this.release(id, state);
      cleaned += 1;
    }
    return cleaned;
  }

  rpcHandlers(): RpcHandlers {
    return {
      [checkoutSessionPatterns.create]: async (payload) => this.create(payload as CheckoutSessionCreateRequest),
      [checkoutSessionPatterns.get]: async (payload) => this.get(payload as CheckoutSessionRef),
      [checkoutSessionPatterns.update]: async (payload) => this.update(payload as CheckoutSessionUpdateRequest),
      [checkoutSessionPatterns.delete]: async (payload) => {
        await this.delete(payload as CheckoutSessionRef);
        return null;
      },
      [checkoutSessionPatterns.attachFields]: async (payload) => {
        await this.attachFields(payload as CheckoutSessionFieldsRequest);
        return null;
      },
      [checkoutSessionPatterns.cardDetails]: async (payload) =>
        this.cardDetails(payload as CheckoutSessionCardDetailsRequest),
    };
  }

  /** Forgets the session's secrets and removes its cards from the vault, not a transaction's or a stored method. */
  private release(id: string, state: CheckoutSessionState): void {
    const usedCard = usedCardOf(state);
    for (const secret of this.secrets.of(id)) {
      if (secret.cardId === usedCard || secret.storedPaymentMethod) this.secrets.forget(id, secret.cardId);
      else this.removeCard(id, secret.merchantAccountId, secret.cardId);
    }
  }

  private storedMethods(): StoredPaymentMethodLookup {
    if (!this.deps.storedPaymentMethods) throw ApiError.badRequest('Stored payment methods are not available here');
    return this.deps.storedPaymentMethods;
  }

  private removeCard(sessionId: string, merchantAccountId: string, cardId: string): void {
    this.deps.vault.remove(merchantAccountId, cardId);
    this.secrets.forget(sessionId, cardId);
  }

  private async state(id: string): Promise<CheckoutSessionState> {
    return fold(await this.context.store.readStream(checkoutSessionStream(id)));
  }

  /** Runs the command on the session's stream, then waits for the read model (read-your-writes). */
  private async handle(id: string, command: CheckoutSessionCommand, where: Where) {
    const handled = await this.append(id, command, where);
    await this.context.catchUp();
    return handled;
  }

  /** Runs the command on the session's stream: decided on its latest state, appended with the revision read. */
  private async append(id: string, command: CheckoutSessionCommand, where: Where) {
    try {
      return await handleCommand(this.context.store, checkoutSessionStream(id), checkoutSessionDecider, command);
    } catch (error) {
      throw rendered(error, where);
    }
  }
}

function fold(recorded: readonly RecordedEvent[]): CheckoutSessionState {
  return recorded.reduce(
    (state, event) => checkoutSessionDecider.evolve(state, asDomainEvent<CheckoutSessionEvent>(event)),
    checkoutSessionDecider.initialState(),
  );
}
