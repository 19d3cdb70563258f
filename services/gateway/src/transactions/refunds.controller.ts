import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  refundAllCreateSchema,
  refundCreateSchema,
  refundSchema,
  refundsSchema,
  transactionsPatterns,
  type Refund,
  type RefundAllCreateInput,
  type RefundCreateInput,
  type TransactionRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import {
  accountOf,
  actorOf,
  byTransaction,
  IdempotencyKey,
  pageRequest,
  read,
  tags,
  withIdempotencyKey,
  write,
  type ByTransaction,
} from './transaction-http';

const byTransactionRefund = byTransaction.extend({ refund_id: z.uuid() });
type ByTransactionRefund = z.infer<typeof byTransactionRefund>;
const byRefund = z.object({ refund_id: z.uuid() });
type ByRefund = z.infer<typeof byRefund>;
const refundsQuery = pageQuery({ maxLimit: 100 });
type RefundsQuery = z.infer<typeof refundsQuery>;

/** Refunds of a transaction's captured amount: one refund, refund everything, list, read (also by refund id alone). */
@Controller()
export class RefundsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'create_transaction_refund',
    method: 'POST',
    path: '/transactions/{transaction_id}/refunds',
    summary: 'Refund (part of) the captured amount of a transaction. Honours `Idempotency-Key`',
    tags,
    idempotencyKey: true,
    auth: write,
    params: byTransaction,
    body: refundCreateSchema,
    status: 201,
    response: { description: 'The refund', schema: refundSchema },
  })
  create(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @Input() input: EndpointInput<unknown, RefundCreateInput, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Refund> {
    const request: TransactionRequest<RefundCreateInput> = {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      body: input.body,
      ...withIdempotencyKey(idempotencyKey),
    };
    return this.rpc.call(transactionsPatterns.refund, request, actorOf(caller));
  }

  @Endpoint({
    operationId: 'create_transaction_refund_all',
    method: 'POST',
    path: '/transactions/{transaction_id}/refunds/all',
    summary:
      'Refund everything captured and not yet refunded, on every instrument of the transaction. The body is optional. Honours `Idempotency-Key`',
    tags,
    idempotencyKey: true,
    auth: write,
    params: byTransaction,
    body: refundAllCreateSchema,
    status: 201,
    response: { description: 'The refunds', schema: refundsSchema },
  })
  createAll(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @Input() input: EndpointInput<unknown, RefundAllCreateInput, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<{ readonly items: readonly Refund[] }> {
    const request: TransactionRequest<RefundAllCreateInput> = {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      body: input.body,
      ...withIdempotencyKey(idempotencyKey),
    };
    return this.rpc.call(transactionsPatterns.refundAll, request, actorOf(caller));
  }

  @Endpoint({
    operationId: 'list_transaction_refunds',
    method: 'GET',
    path: '/transactions/{transaction_id}/refunds',
    summary: 'List the refunds of a transaction, oldest first',
    tags,
    auth: read,
    params: byTransaction,
    query: refundsQuery,
    status: 200,
    response: { description: 'A page of refunds', schema: refundsSchema },
  })
  list(
    @Input() input: EndpointInput<RefundsQuery, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Page<Refund>> {
    return this.rpc.call(transactionsPatterns.refunds, pageRequest(accountOf(caller), input.params, input.query));
  }

  @Endpoint({
    operationId: 'get_transaction_refund',
    method: 'GET',
    path: '/transactions/{transaction_id}/refunds/{refund_id}',
    summary: 'Get a refund of a transaction',
    tags,
    auth: read,
    params: byTransactionRefund,
    status: 200,
    response: { description: 'The refund', schema: refundSchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, ByTransactionRefund>,
    @CallerOf() caller: Caller,
  ): Promise<Refund> {
    return this.rpc.call(transactionsPatterns.refundGet, {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      refund_id: input.params.refund_id,
    });
  }

  @Endpoint({
    operationId: 'get_refund',
    method: 'GET',
    path: '/refunds/{refund_id}',
    summary: 'Get a refund by its id alone',
    tags: ['Refunds'],
    auth: read,
    params: byRefund,
    status: 200,
    response: { description: 'The refund', schema: refundSchema },
  })
  getById(@Input() input: EndpointInput<unknown, unknown, ByRefund>, @CallerOf() caller: Caller): Promise<Refund> {
    return this.rpc.call(transactionsPatterns.refundById, {
      merchant_account_id: accountOf(caller),
      refund_id: input.params.refund_id,
    });
  }
}
