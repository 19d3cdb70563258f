import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  authorizationIncrementCreateSchema,
  authorizationIncrementSchema,
  giftCardPatterns,
  type AuthorizationIncrement,
  type AuthorizationIncrementInput,
  transactionActionsSchema,
  transactionCancelSchema,
  transactionCreateSchema,
  transactionEventsSchema,
  transactionGetQuerySchema,
  transactionListQuerySchema,
  transactionSchema,
  transactionsPatterns,
  transactionSummariesSchema,
  transactionUpdateSchema,
  transactionVoidSchema,
  vaultPatterns,
  type CardHandOver,
  type CardHandOverRequest,
  type Transaction,
  type TransactionAction,
  type TransactionCancel,
  type TransactionCreateInput,
  type TransactionCreateRequest,
  type TransactionEventItem,
  type TransactionGetQuery,
  type TransactionGetRequest,
  type TransactionListRequest,
  type TransactionRequest,
  type TransactionSummary,
  type TransactionUpdateInput,
  type TransactionVoid,
  type TransactionVoidRequest,
  type GiftCardHandOver,
  type GiftCardHandOverRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { EMBED_SCOPE, embedBuyerOf, transactionBodyFor } from '../auth/embed-claims';
import { Input, type EndpointInput } from '../http/input';
import type { ThreeDsConfigurationCache } from '../merchant-accounts/three-ds-configuration-cache';
import { RPC_CLIENT, THREE_DS_CONFIGURATIONS } from '../tokens';
import {
  accountOf,
  actorOf,
  byTransaction,
  IdempotencyKey,
  pageRequest,
  PrefersResource,
  read,
  tags,
  withIdempotencyKey,
  withoutBody,
  write,
  type ByTransaction,
} from './transaction-http';

const listQuery = pageQuery({ maxLimit: 100 }).extend(transactionListQuerySchema.shape);
type ListQuery = z.infer<typeof listQuery>;
const eventsQuery = pageQuery({ maxLimit: 100, defaultLimit: 100 });
type EventsQuery = z.infer<typeof eventsQuery>;

/**
 * Transactions of the request's merchant account: create (authorize, or authorize and capture), list, read, update,
 * their events, and the operations without a body of their own (void, cancel, sync). Captures and refunds have
 * their own controllers.
 */
@Controller()
export class TransactionsController {
  constructor(
    @Inject(RPC_CLIENT) private readonly rpc: RpcClient,
    @Inject(THREE_DS_CONFIGURATIONS) private readonly threeDs: ThreeDsConfigurationCache,
  ) {}

  @Endpoint({
    operationId: 'create_transaction',
    method: 'POST',
    path: '/transactions',
    summary:
      'Create a transaction: authorize (and capture, with `intent=capture`) a payment. Honours `Idempotency-Key`',
    tags,
    idempotencyKey: true,
    auth: { anyOf: ['transactions.write', EMBED_SCOPE] },
    body: transactionCreateSchema,
    status: 201,
    enumerationLimit: 'embed-token',
    response: { description: 'The transaction', schema: transactionSchema },
  })
  async create(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @Input() input: EndpointInput<unknown, TransactionCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<Transaction> {
    const merchantAccountId = accountOf(caller);
    const given = transactionBodyFor(caller, input.body);
    const method = given.payment_method?.method;
    // Asked of identity while the vault takes the card (two services, neither waiting on the other); the hand-over's
    // refusal still comes first.
    const configurations = method === 'card' || method === 'id' ? this.threeDs.list(merchantAccountId) : null;
    configurations?.catch(() => undefined);
    const { body, cardHandOver } = await this.handOverCard(merchantAccountId, given);
    // After the card: a card the vault refuses leaves no gift card handed over (the transactions service has the
    // gift cards service erase them when it refuses the request).
    const giftCards = await this.handOverGiftCards(merchantAccountId, given);
    const request: TransactionCreateRequest = {
      merchant_account_id: merchantAccountId,
      body: giftCards ? { ...body, gift_cards: giftCards.items } : body,
      ...withIdempotencyKey(idempotencyKey),
      ...(configurations ? { three_ds_configurations: await configurations } : {}),
      ...embedBuyerOf(caller),
      ...(cardHandOver ? { card_hand_over: cardHandOver } : {}),
      ...(giftCards ? { gift_card_hand_over: giftCards.handOver } : {}),
    };
    return this.rpc.call(transactionsPatterns.create, request, actorOf(caller));
  }

  /**
   * The gift cards a validated body gives by number and PIN go to the gift cards service here (issue 19 item 4): the
   * transactions service gets each as `{ id: <one-off card>, amount }` and, aligned with `gift_cards`, its hand-over
   * (null for a stored card). Null when the body gives none by number.
   */
  private async handOverGiftCards(
    merchantAccountId: string,
    body: TransactionCreateInput,
  ): Promise<{
    items: NonNullable<TransactionCreateInput['gift_cards']>;
    handOver: (GiftCardHandOver | null)[];
  } | null> {
    const items = body.gift_cards ?? [];
    const given = items.flatMap((item) => ('number' in item ? [{ number: item.number, pin: item.pin }] : []));
    if (given.length === 0) return null;
    const handedOver = await this.rpc.call<GiftCardHandOver[]>(giftCardPatterns.handOver, {
      merchant_account_id: merchantAccountId,
      cards: given,
    } satisfies GiftCardHandOverRequest);
    let next = 0;
    const handOver = items.map((item) => ('number' in item ? handedOver[next++]! : null));
    return {
      items: items.map((item, index) => (handOver[index] ? { id: handOver[index].id, amount: item.amount } : item)),
      handOver,
    };
  }

  /**
   * The card data of a validated body (a card's number and security code, a stored method's security code) goes to
   * the vault here (issue 19 item 4); the transactions service gets the body without it, and the vault's hand-over
   * (the card's id, the security code's alias, a digest for the Idempotency-Key fingerprint).
   */
  private async handOverCard(
    merchantAccountId: string,
    body: TransactionCreateInput,
  ): Promise<{ body: TransactionCreateInput; cardHandOver: CardHandOver | null }> {
    const paymentMethod = body.payment_method;
    if (paymentMethod?.method === 'card') {
      const { number, security_code: securityCode, ...rest } = paymentMethod;
      const cardHandOver = await this.rpc.call<CardHandOver>(vaultPatterns.handOverCard, {
        merchant_account_id: merchantAccountId,
        card: {
          number,
          expiration_date: paymentMethod.expiration_date,
          ...(securityCode ? { security_code: securityCode } : {}),
        },
        buyer: { buyer_id: body.buyer_id ?? null, buyer_external_identifier: body.buyer_external_identifier ?? null },
      } satisfies CardHandOverRequest);
      return { body: { ...body, payment_method: rest as typeof paymentMethod }, cardHandOver };
    }
    if (paymentMethod?.method === 'id' && paymentMethod.security_code) {
      const { security_code: securityCode, ...rest } = paymentMethod;
      const cardHandOver = await this.rpc.call<CardHandOver>(vaultPatterns.handOverCard, {
        merchant_account_id: merchantAccountId,
        security_code: securityCode,
      } satisfies CardHandOverRequest);
      return { body: { ...body, payment_method: rest }, cardHandOver };
    }
    return { body, cardHandOver: null };
  }

  @Endpoint({
    operationId: 'list_transaction_actions',
    method: 'GET',
    path: '/transactions/{transaction_id}/actions',
    summary:
      'The flow rules that matched when the transaction was created, and what each did (a skip-3ds rule overridden by issuer-mandated 3-D Secure says so)',
    tags,
    auth: read,
    params: byTransaction,
    status: 200,
    response: { description: 'The matched flow rules', schema: transactionActionsSchema },
  })
  actions(
    @Input() input: EndpointInput<unknown, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: TransactionAction[] }> {
    return this.rpc.call(transactionsPatterns.actions, {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
    });
  }

  @Endpoint({
    operationId: 'list_transactions',
    method: 'GET',
    path: '/transactions',
    summary: "List the merchant account's transactions, newest first, filtered by the query",
    tags,
    auth: read,
    query: listQuery,
    status: 200,
    response: { description: 'A page of transactions', schema: transactionSummariesSchema },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<TransactionSummary>> {
    const { cursor, limit, ...filters } = input.query;
    const definedFilters = Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined));
    const request: TransactionListRequest = {
      ...definedFilters,
      merchant_account_id: accountOf(caller),
      limit,
      ...(cursor ? { cursor } : {}),
    };
    return this.rpc.call(transactionsPatterns.list, request);
  }

  @Endpoint({
    operationId: 'get_transaction',
    method: 'GET',
    path: '/transactions/{transaction_id}',
    summary:
      'Get a transaction; with `as_of`, as it stood at that moment (folded from its events recorded then or earlier)',
    tags,
    auth: read,
    params: byTransaction,
    query: transactionGetQuerySchema,
    status: 200,
    response: { description: 'The transaction', schema: transactionSchema },
  })
  get(
    @Input() input: EndpointInput<TransactionGetQuery, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Transaction> {
    const request: TransactionGetRequest = {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      ...(input.query.as_of !== undefined ? { as_of: input.query.as_of } : {}),
    };
    return this.rpc.call(transactionsPatterns.get, request);
  }

  @Endpoint({
    operationId: 'update_transaction',
    method: 'PUT',
    path: '/transactions/{transaction_id}',
    summary: "Update a transaction's `external_identifier` and `metadata`: only the fields sent change, null clears",
    tags,
    auth: write,
    params: byTransaction,
    body: transactionUpdateSchema,
    status: 200,
    response: { description: 'The transaction', schema: transactionSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, TransactionUpdateInput, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Transaction> {
    const request: TransactionRequest<TransactionUpdateInput> = {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      body: input.body,
    };
    return this.rpc.call(transactionsPatterns.update, request, actorOf(caller));
  }

  @Endpoint({
    operationId: 'list_transaction_events',
    method: 'GET',
    path: '/transactions/{transaction_id}/events',
    summary: 'List the events of a transaction, oldest first',
    tags,
    auth: read,
    params: byTransaction,
    query: eventsQuery,
    status: 200,
    response: { description: 'A page of transaction events', schema: transactionEventsSchema },
  })
  events(
    @Input() input: EndpointInput<EventsQuery, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Page<TransactionEventItem>> {
    return this.rpc.call(transactionsPatterns.events, pageRequest(accountOf(caller), input.params, input.query));
  }

  @Endpoint({
    operationId: 'void_transaction',
    method: 'POST',
    path: '/transactions/{transaction_id}/void',
    summary:
      'Void an authorized, not yet captured transaction. Answers the transaction, or the void result with `Prefer: resource=transaction-void`. Honours `Idempotency-Key`',
    tags,
    idempotencyKey: true,
    auth: write,
    params: byTransaction,
    status: 200,
    response: {
      description: 'The transaction, or the void result',
      schema: z.union([transactionSchema, transactionVoidSchema]),
    },
  })
  void(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @PrefersResource('transaction-void') preferVoid: boolean,
    @Input() input: EndpointInput<unknown, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Transaction | TransactionVoid> {
    const request: TransactionVoidRequest = {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      body: undefined,
      prefer_void: preferVoid,
      ...withIdempotencyKey(idempotencyKey),
    };
    return this.rpc.call(transactionsPatterns.void, request, actorOf(caller));
  }

  @Endpoint({
    operationId: 'cancel_transaction',
    method: 'POST',
    path: '/transactions/{transaction_id}/cancel',
    summary: 'Cancel a transaction that is not yet authorized (pending at the payment service)',
    tags,
    auth: write,
    params: byTransaction,
    status: 200,
    response: { description: 'The cancel result', schema: transactionCancelSchema },
  })
  cancel(
    @Input() input: EndpointInput<unknown, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<TransactionCancel> {
    return this.rpc.call(transactionsPatterns.cancel, withoutBody(caller, input.params), actorOf(caller));
  }

  @Endpoint({
    operationId: 'sync_transaction',
    method: 'POST',
    path: '/transactions/{transaction_id}/sync',
    summary: 'Ask the payment service for the latest status of a transaction',
    tags,
    auth: write,
    params: byTransaction,
    status: 200,
    response: { description: 'The transaction', schema: transactionSchema },
  })
  sync(
    @Input() input: EndpointInput<unknown, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Transaction> {
    return this.rpc.call(transactionsPatterns.sync, withoutBody(caller, input.params), actorOf(caller));
  }

  @Endpoint({
    operationId: 'increment_transaction_authorization',
    method: 'POST',
    path: '/transactions/{transaction_id}/authorization/increment',
    summary:
      "Raise the authorized amount by `amount` (only in authorization_succeeded, on payment services that support it). Answers the outcome with the payment service's response code and description. Honours `Idempotency-Key`",
    tags,
    idempotencyKey: true,
    auth: write,
    params: byTransaction,
    body: authorizationIncrementCreateSchema,
    status: 200,
    response: { description: 'The outcome and the transaction', schema: authorizationIncrementSchema },
  })
  increment(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @Input() input: EndpointInput<unknown, AuthorizationIncrementInput, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<AuthorizationIncrement> {
    const request: TransactionRequest<AuthorizationIncrementInput> = {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      body: input.body,
      ...withIdempotencyKey(idempotencyKey),
    };
    return this.rpc.call(transactionsPatterns.increment, request, actorOf(caller));
  }
}
