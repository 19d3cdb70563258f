/**
 * The vault as the transactions service asks it (its `VaultPort`), answered by the vault's slices in the same
 * process. Every answer is a Promise, as it will be once the vault answers over RPC from a process of its own.
 *
 * A card comes back as a summary: what a payment decides on (BIN up to 8 digits and what the BIN data says of it,
 * last four, expiry), worked out here from the number. Its number and security code never come back: a card-bearing
 * call is built with the aliases `cardAliases` issues (`forwarder/card-aliases.ts`), which only the vault's outbound
 * forwarder swaps back. A security code given with a payment or a checkout session is held as an alias in this
 * process's memory only, and answered as that alias. Every argument and answer is JSON-safe (it crosses RPC once the
 * vault has a process of its own).
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import type { BinData } from '@switchyard/bin-data';
import type { CardHandOver, CardHandOverRequest, VaultCardAliases, VaultCardSummary } from '@switchyard/contracts';
import { CardAliasError } from './forwarder/card-aliases';
import type { PazeConnection } from './digital-wallets/paze-payments';
import type { StoredCard } from './vault/card-vault';
import type { VaultSlices } from './vault-slices';

export type { VaultCardAliases, VaultCardSummary } from '@switchyard/contracts';

/** A stored card's summary, and the alias of the security code given with it (held in the vault's memory only). */
export interface VaultStoredCard extends VaultCardSummary {
  readonly securityCodeAlias: string | null;
}

const BIN_PREFIX_DIGITS = 8;

/** A claim stopped before the session was used: it holds a stored method the caller has not vetted. */
class NotVetted extends Error {}
/** Keys the digest of handed-over card data (`handOverCard`). */
const HAND_OVER_DIGEST_PURPOSE = 'switchyard/card-hand-over-digest/v1';

/** How long a handed-over card waits for its payment to take it before the vault removes it; default 10 minutes. */
export const DEFAULT_CARD_HAND_OVER_TTL_MS = 10 * 60 * 1000;

/** How long after a take its wait is released (with the others taken meanwhile, one commit). */
const RELEASE_AFTER_MS = 250;

export class InProcessVault {
  /**
   * Handed-over cards taken by their payments whose waits are not released in the store yet (`vault_card_hand_overs`
   * holds the waits, written with the card: a restart forgets none). Released in one commit `RELEASE_AFTER_MS` after
   * a take, so that a payment's take adds no fsync of its own; the sweep never removes one of these meanwhile.
   */
  readonly #taken = new Map<string, string>();
  #releasing: NodeJS.Timeout | null = null;
  readonly #handOverTtlMs: number;
  /** Keys the hand-over's digest: derived once, not on every payment (10 % of the vault's CPU when it was). */
  readonly #handOverDigestKey: KeyObject;

  constructor(
    private readonly slices: VaultSlices,
    private readonly binData: BinData,
    options: { readonly handOverTtlMs?: number } = {},
  ) {
    this.#handOverTtlMs = options.handOverTtlMs ?? DEFAULT_CARD_HAND_OVER_TTL_MS;
    this.#handOverDigestKey = createSecretKey(slices.sealingKey(HAND_OVER_DIGEST_PURPOSE));
  }

  async storeCard(
    merchantAccountId: string,
    card: { readonly number: string; readonly expirationDate: string; readonly securityCode?: string | null },
    options: { readonly buyerId: string | null },
  ): Promise<VaultStoredCard> {
    return this.store(merchantAccountId, card, options);
  }

  private store(
    merchantAccountId: string,
    card: { readonly number: string; readonly expirationDate: string; readonly securityCode?: string | null },
    options: { readonly buyerId: string | null; readonly handOverUntil?: Date },
  ): VaultStoredCard {
    const stored = this.slices.vault.store(
      merchantAccountId,
      { number: card.number, expirationDate: card.expirationDate },
      { buyerId: options.buyerId, ...(options.handOverUntil ? { handOverUntil: options.handOverUntil } : {}) },
    );
    return {
      ...this.summary(stored, card.number),
      securityCodeAlias: card.securityCode
        ? this.slices.cardAliases.issueSecurityCode(merchantAccountId, card.securityCode)
        : null,
    };
  }

  async findCard(merchantAccountId: string, id: string): Promise<VaultCardSummary | null> {
    return this.revealed(merchantAccountId, id)?.summary ?? null;
  }

  /** A card's summary and its number and expiry, decrypted once; null when it is gone. */
  private revealed(merchantAccountId: string, id: string) {
    const stored = this.slices.vault.find(merchantAccountId, id);
    const card = stored && this.slices.vault.reveal(merchantAccountId, id);
    return stored && card ? { summary: this.summary(stored, card.number), card } : null;
  }

  /**
   * Fresh aliases of a card's number and (given the alias of one issued before, still live) security code, bound to
   * the merchant account; null when the card is gone. A security code alias that is no longer live gives none.
   */
  async cardAliases(
    merchantAccountId: string,
    cardId: string,
    options: { readonly securityCode?: string | null } = {},
  ): Promise<VaultCardAliases | null> {
    const card = this.slices.vault.reveal(merchantAccountId, cardId);
    return card ? this.aliasesOf(merchantAccountId, card, options.securityCode ?? null) : null;
  }

  private aliasesOf(
    merchantAccountId: string,
    card: { readonly number: string; readonly expirationDate: string },
    securityCodeAlias: string | null,
  ): VaultCardAliases {
    const aliases = this.slices.cardAliases;
    let securityCode: string | null = null;
    if (securityCodeAlias) {
      try {
        securityCode = aliases.resolve(merchantAccountId, securityCodeAlias);
      } catch (error) {
        if (!(error instanceof CardAliasError)) throw error;
      }
    }
    const issued = aliases.issue(merchantAccountId, { number: card.number, securityCode });
    return {
      number: issued.number,
      securityCode: issued.securityCode,
      expirationDate: card.expirationDate,
      expiresAt: issued.expiresAt.toISOString(),
    };
  }

  /**
   * The card data of a `POST /transactions`, handed over by the gateway before the transactions service sees it:
   * the card stored (under the request's buyer's data key when that buyer exists), the security code held as an
   * alias, and a keyed digest of both for the Idempotency-Key fingerprint.
   */
  async handOverCard(request: CardHandOverRequest): Promise<CardHandOver> {
    const merchantAccountId = request.merchant_account_id;
    const securityCode = request.card ? (request.card.security_code ?? null) : (request.security_code ?? null);
    const digest = createHmac('sha256', this.#handOverDigestKey)
      .update(JSON.stringify([request.card?.number ?? null, securityCode]))
      .digest('hex');
    if (!request.card) {
      return {
        card_id: null,
        security_code_alias: securityCode
          ? this.slices.cardAliases.issueSecurityCode(merchantAccountId, securityCode)
          : null,
        digest,
      };
    }
    const card = { number: request.card.number, expirationDate: request.card.expiration_date };
    const { securityCodeAlias, ...summary } = this.store(
      merchantAccountId,
      { ...card, securityCode },
      {
        buyerId: this.existingBuyer(merchantAccountId, request.buyer ?? {}),
        handOverUntil: new Date(Date.now() + this.#handOverTtlMs),
      },
    );
    return {
      card_id: summary.id,
      security_code_alias: securityCodeAlias,
      digest,
      card: summary,
      aliases: this.aliasesOf(merchantAccountId, card, securityCodeAlias),
    };
  }

  /**
   * The card handed over for this payment, taken by it (no longer removed as unclaimed). Alone, the take answers
   * whether the vault still has the card, from its row: the hand-over answered the summary and the first aliases, so
   * nothing is decrypted. With `aliases` (a hand-over that answered only the card's id), the card's summary and its
   * first aliases (`cardAliases`), or null when it is gone.
   */
  async takeHandedOverCard(merchantAccountId: string, cardId: string): Promise<boolean>;
  async takeHandedOverCard(
    merchantAccountId: string,
    cardId: string,
    options: { readonly aliases: { readonly securityCode: string | null } },
  ): Promise<(VaultCardSummary & { readonly aliases: VaultCardAliases | null }) | null>;
  async takeHandedOverCard(
    merchantAccountId: string,
    cardId: string,
    options: { readonly aliases?: { readonly securityCode: string | null } } = {},
  ): Promise<boolean | (VaultCardSummary & { readonly aliases: VaultCardAliases | null }) | null> {
    if (this.slices.vault.isHandedOver(merchantAccountId, cardId)) {
      this.#taken.set(cardId, merchantAccountId);
      this.#scheduleRelease();
    }
    if (!options.aliases) return this.slices.vault.find(merchantAccountId, cardId) !== null;
    const found = this.revealed(merchantAccountId, cardId);
    if (!found) return null;
    return { ...found.summary, aliases: this.aliasesOf(merchantAccountId, found.card, options.aliases.securityCode) };
  }

  /**
   * Removes the handed-over cards no payment took in time (the transactions call never arrived); answers how many.
   * The vault service's background round runs it.
   */
  sweepHandedOverCards(): number {
    const expired = this.slices.vault
      .expiredHandOvers(new Date())
      .filter(({ merchantAccountId, id }) => this.#taken.get(id) !== merchantAccountId);
    this.slices.vault.removeAll(expired);
    return expired.length;
  }

  #scheduleRelease(): void {
    if (this.#releasing) return;
    this.#releasing = setTimeout(() => {
      try {
        this.releaseTakenCards();
      } catch {
        // The store could not take it now (busy, or closing): the takes stay pending, and are released next time.
        this.#releasing = null;
        if (this.#taken.size > 0) this.#scheduleRelease();
      }
    }, RELEASE_AFTER_MS);
    this.#releasing.unref();
  }

  /** Releases the waits of the cards taken since the last release, in one commit (also when the vault stops). */
  releaseTakenCards(): void {
    if (this.#releasing) clearTimeout(this.#releasing);
    this.#releasing = null;
    if (this.#taken.size === 0) return;
    const taken = [...this.#taken].map(([id, merchantAccountId]) => ({ merchantAccountId, id }));
    this.slices.vault.releaseHandOvers(taken);
    for (const { id } of taken) this.#taken.delete(id);
  }

  /** The buyer a request names, when it exists (the transactions service refuses one that does not, and the card goes). */
  private existingBuyer(
    merchantAccountId: string,
    ref: { readonly buyer_id?: string | null; readonly buyer_external_identifier?: string | null },
  ): string | null {
    try {
      return this.slices.buyerDirectory.resolve(merchantAccountId, ref, '/buyer_id')?.id ?? null;
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return null;
      throw error;
    }
  }

  /** An alias of a security code given with a payment (a stored method's), held in the vault's memory only. */
  async aliasSecurityCode(merchantAccountId: string, securityCode: string): Promise<string> {
    return this.slices.cardAliases.issueSecurityCode(merchantAccountId, securityCode);
  }

  /** Forgets security codes' aliases once the authorizations they were given for are done. */
  async forgetSecurityCodes(
    codes: readonly { readonly merchantAccountId: string; readonly alias: string }[],
  ): Promise<void> {
    for (const { merchantAccountId, alias } of codes) this.slices.cardAliases.forget(merchantAccountId, alias);
  }

  /** Keeps a security code's alias live for `ttlMs` (a 3-D Secure challenge); false when it was not live. */
  async keepSecurityCode(merchantAccountId: string, alias: string, ttlMs: number): Promise<boolean> {
    return this.slices.cardAliases.keep(merchantAccountId, alias, ttlMs);
  }

  async removeCards(cards: readonly { readonly merchantAccountId: string; readonly id: string }[]): Promise<void> {
    for (const { merchantAccountId, id } of cards)
      if (this.#taken.get(id) === merchantAccountId) this.#taken.delete(id);
    this.slices.vault.removeAll(cards);
  }

  async usablePaymentMethod(merchantAccountId: string, id: string): Promise<{ readonly buyerId: string | null }> {
    return { buyerId: this.slices.paymentMethods.usable(merchantAccountId, id).buyerId };
  }

  async recordStoreRequested(
    merchantAccountId: string,
    request: {
      readonly card: VaultCardSummary;
      readonly transactionId: string;
      readonly paymentServiceId: string;
      readonly buyerId: string | null;
      readonly externalIdentifier: string | null;
    },
  ): Promise<void> {
    // The card is kept: its wait is released now, in a commit of its own before the method is recorded, never left to
    // the batched release (a kill -9 in between would have let the sweep remove a stored method's card).
    if (this.#taken.get(request.card.id) === merchantAccountId) this.#taken.delete(request.card.id);
    this.slices.vault.releaseHandOvers([{ merchantAccountId, id: request.card.id }]);
    await this.slices.paymentMethods.recordStoreRequested(merchantAccountId, { ...request, bin: request.card.binInfo });
  }

  receiveVaultToken(transactionId: string, paymentServiceId: string): Promise<void> {
    return this.slices.paymentMethods.receiveVaultToken(transactionId, paymentServiceId);
  }

  networkTokenForTransaction(
    merchantAccountId: string,
    paymentMethodId: string,
    options: { readonly merchantInitiated: boolean },
  ) {
    return this.slices.networkTokens.tokenForTransaction(merchantAccountId, paymentMethodId, options);
  }

  async resolveBuyer(
    merchantAccountId: string,
    ref: { readonly buyer_id?: string | null; readonly buyer_external_identifier?: string | null },
    pointer: string,
  ): Promise<{ readonly id: string } | null> {
    const buyer = this.slices.buyerDirectory.resolve(merchantAccountId, ref, pointer);
    return buyer ? { id: buyer.id } : null;
  }

  async buyerWire(merchantAccountId: string, buyerId: string): Promise<Record<string, unknown> | null> {
    return this.slices.buyerDirectory.wire(merchantAccountId, buyerId);
  }

  /**
   * A checkout session's card, used up by `transactionId`; a session holding a stored method other than
   * `vettedStoredMethod` is left unused and answered `{ vetStoredMethod }` (the caller checks whose it is, then asks
   * again): no callback crosses the port.
   */
  async claimCheckoutSession(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    options: { readonly vettedStoredMethod: string | null },
  ): Promise<
    | { readonly cardId: string; readonly storedPaymentMethod: boolean; readonly securityCodeAlias: string | null }
    | { readonly vetStoredMethod: string }
  > {
    let unvetted: string | null = null;
    const claimed = await this.slices.checkoutSessions
      .claim(merchantAccountId, sessionId, transactionId, {
        vetStoredMethod: (paymentMethodId) => {
          if (paymentMethodId === options.vettedStoredMethod) return;
          unvetted = paymentMethodId;
          throw new NotVetted();
        },
      })
      .catch((error: unknown) => {
        if (error instanceof NotVetted) return null;
        throw error;
      });
    if (!claimed) return { vetStoredMethod: unvetted as unknown as string };
    const { cardId, storedPaymentMethod, card } = claimed;
    // The number stays here: the card is paid with by its id (`cardAliases`); the security code as an alias.
    const securityCodeAlias = card.securityCode
      ? this.slices.cardAliases.issueSecurityCode(merchantAccountId, card.securityCode)
      : null;
    return { cardId, storedPaymentMethod, securityCodeAlias };
  }

  openPaze(
    merchantAccountId: string,
    payload: string,
    input: { readonly currency: string; readonly connections: readonly PazeConnection[] },
  ) {
    return this.slices.paze.open(merchantAccountId, payload, input);
  }

  private summary(stored: StoredCard, number: string): VaultCardSummary {
    const binInfo = this.binData.lookup(number);
    return {
      ...stored,
      cardType: binInfo.cardType ?? stored.cardType,
      binPrefix: number.slice(0, BIN_PREFIX_DIGITS),
      binInfo,
    };
  }
}
