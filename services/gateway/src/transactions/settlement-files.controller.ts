import { Controller, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  settlementFileResultSchema,
  transactionsPatterns,
  type SettlementFileRequest,
  type SettlementFileResult,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RouteBody } from '../http/json-body';
import { RPC_CLIENT } from '../tokens';
import { accountOf, actorOf } from './transaction-http';

export const MAX_SETTLEMENT_FILE_CHARACTERS = 10 * 1024 * 1024;
/**
 * The file travels as a JSON string, where escapes (`\n`, `\"`) and multi-byte characters take more bytes than
 * characters: room for that, well above the 1 MB limit of every other route.
 */
export const SETTLEMENT_FILE_BODY_LIMIT_BYTES = 24 * 1024 * 1024;

const byPaymentService = z.object({ payment_service_id: z.uuid() });
type ByPaymentService = z.infer<typeof byPaymentService>;

export const settlementFileCreateSchema = z
  .object({
    file_name: z.string().min(1).max(255),
    content: z
      .string()
      .max(MAX_SETTLEMENT_FILE_CHARACTERS)
      .meta({ description: 'The settlement file as the payment service produced it (e.g. CSV), at most 10 MB.' }),
  })
  .strict()
  .meta({ id: 'SettlementFileCreate' });
type SettlementFileCreate = z.infer<typeof settlementFileCreateSchema>;

/** Settlement files of a payment service, handed over by the merchant; their records settle captures and refunds. */
@Controller()
export class SettlementFilesController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'ingest_settlement_file',
    method: 'POST',
    path: '/payment-services/{payment_service_id}/settlement-files',
    summary:
      "Ingest a settlement file of the payment service: its records settle the merchant account's captures and refunds",
    tags: ['Payment services'],
    auth: { anyOf: ['payment-services.write'] },
    params: byPaymentService,
    body: settlementFileCreateSchema,
    status: 200,
    response: { description: 'What the file settled', schema: settlementFileResultSchema },
  })
  @RouteBody({ limitBytes: SETTLEMENT_FILE_BODY_LIMIT_BYTES })
  ingest(
    @Input() input: EndpointInput<unknown, SettlementFileCreate, ByPaymentService>,
    @CallerOf() caller: Caller,
  ): Promise<SettlementFileResult> {
    const request: SettlementFileRequest = {
      merchant_account_id: accountOf(caller),
      payment_service_id: input.params.payment_service_id,
      file_name: input.body.file_name,
      content: input.body.content,
    };
    return this.rpc.call(transactionsPatterns.settlementFile, request, actorOf(caller));
  }
}
