import { Controller, Inject } from '@nestjs/common';
import { ApiError, Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  merchantAccountPatterns,
  transactionCaptureCreateSchema,
  transactionCaptureSchema,
  transactionCapturesSchema,
  transactionSchema,
  transactionsPatterns,
  type CaptureAccountSettings,
  type MerchantAccount,
  type Transaction,
  type TransactionCapture,
  type TransactionCaptureInput,
  type TransactionCaptureRequest,
  type TransactionCaptureSummary,
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
  PrefersResource,
  read,
  tags,
  withIdempotencyKey,
  write,
  type ByTransaction,
} from './transaction-http';

const byCapture = byTransaction.extend({ capture_id: z.string().min(1).max(100) });
type ByCapture = z.infer<typeof byCapture>;
const capturesQuery = pageQuery({ maxLimit: 100 });
type CapturesQuery = z.infer<typeof capturesQuery>;

/**
 * What capture reads of a merchant account. `multiple_captures_enabled` is read as optional so that this compiles
 * (and an identity service that does not send it yet means "off") whether or not the account schema has it.
 */
type CaptureSettingsOfAccount = Pick<MerchantAccount, 'over_capture_amount' | 'over_capture_percentage'> & {
  readonly multiple_captures_enabled?: boolean | null;
};

const noCaptureSettings: CaptureAccountSettings = {
  multiple_captures_enabled: false,
  over_capture_amount: null,
  over_capture_percentage: null,
};

/** Captures of a transaction's authorization: capture (one or several, per the merchant account), list, read. */
@Controller()
export class CapturesController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'capture_transaction',
    method: 'POST',
    path: '/transactions/{transaction_id}/capture',
    summary:
      'Capture (part of) an authorized transaction. Answers the transaction, or the capture with `Prefer: resource=transaction-capture`. Honours `Idempotency-Key`',
    tags,
    idempotencyKey: true,
    auth: write,
    params: byTransaction,
    body: transactionCaptureCreateSchema,
    status: 200,
    response: {
      description: 'The transaction, or the capture',
      schema: z.union([transactionSchema, transactionCaptureSchema]),
    },
  })
  async capture(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @PrefersResource('transaction-capture') preferCapture: boolean,
    @Input() input: EndpointInput<unknown, TransactionCaptureInput, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Transaction | TransactionCapture> {
    const merchantAccountId = accountOf(caller);
    const request: TransactionCaptureRequest = {
      merchant_account_id: merchantAccountId,
      transaction_id: input.params.transaction_id,
      body: input.body,
      settings: await this.captureSettings(merchantAccountId),
      prefer_capture: preferCapture,
      ...withIdempotencyKey(idempotencyKey),
    };
    return this.rpc.call(transactionsPatterns.capture, request, actorOf(caller));
  }

  @Endpoint({
    operationId: 'list_transaction_captures',
    method: 'GET',
    path: '/transactions/{transaction_id}/captures',
    summary: 'List the captures of a transaction, oldest first',
    tags,
    auth: read,
    params: byTransaction,
    query: capturesQuery,
    status: 200,
    response: { description: 'A page of captures', schema: transactionCapturesSchema },
  })
  list(
    @Input() input: EndpointInput<CapturesQuery, unknown, ByTransaction>,
    @CallerOf() caller: Caller,
  ): Promise<Page<TransactionCaptureSummary>> {
    return this.rpc.call(transactionsPatterns.captures, pageRequest(accountOf(caller), input.params, input.query));
  }

  @Endpoint({
    operationId: 'get_transaction_capture',
    method: 'GET',
    path: '/transactions/{transaction_id}/captures/{capture_id}',
    summary: 'Get a capture of a transaction',
    tags,
    auth: read,
    params: byCapture,
    status: 200,
    response: { description: 'The capture', schema: transactionCaptureSchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, ByCapture>,
    @CallerOf() caller: Caller,
  ): Promise<TransactionCapture> {
    return this.rpc.call(transactionsPatterns.captureGet, {
      merchant_account_id: accountOf(caller),
      transaction_id: input.params.transaction_id,
      capture_id: input.params.capture_id,
    });
  }

  /** The merchant account's capture settings, asked of identity; an account identity does not know has them all off. */
  private async captureSettings(merchantAccountId: string): Promise<CaptureAccountSettings> {
    let account: CaptureSettingsOfAccount;
    try {
      account = await this.rpc.call<CaptureSettingsOfAccount>(merchantAccountPatterns.get, { id: merchantAccountId });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return noCaptureSettings;
      throw error;
    }
    return {
      multiple_captures_enabled: account.multiple_captures_enabled ?? false,
      over_capture_amount: account.over_capture_amount ?? null,
      over_capture_percentage: account.over_capture_percentage ?? null,
    };
  }
}
