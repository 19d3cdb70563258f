import { Controller, Inject, Res } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import { transactionsPatterns, type BuyerReturnRequest, type BuyerReturnResult } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { tags } from './transaction-http';

const byTransaction = z.object({ transaction_id: z.uuid() });
const returnQuery = z.object({ token: z.string().min(1).max(100) }).loose();
type ReturnQuery = z.infer<typeof returnQuery>;

/**
 * Where a buyer's browser comes back from a 3-D Secure challenge (the ACS) or a redirect payment method (the
 * provider's approval page). No token — a browser has none: the `token` query parameter, an HMAC of the transaction
 * id that only Switchyard can make, is checked instead. The outcome is read from the directory server or the
 * provider, never from this request. Answers 303 to the payment method's `redirect_url` with `transaction_id` and
 * `transaction_status` appended (always re-fetch the transaction), or a small page without one.
 */
@Controller()
export class BuyerReturnController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'buyer_return',
    method: 'GET',
    path: '/transactions/{transaction_id}/buyer-return',
    summary:
      "The buyer's browser back from a 3-D Secure challenge or a redirect payment method; 303 to the payment method's redirect_url",
    tags,
    auth: 'public',
    merchantAccount: 'ignored',
    params: byTransaction,
    query: returnQuery,
    status: 303,
    response: { description: 'See Other: the redirect_url with transaction_id and transaction_status' },
  })
  async buyerReturn(
    @Input() input: EndpointInput<ReturnQuery, unknown, z.infer<typeof byTransaction>>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const request: BuyerReturnRequest = { transaction_id: input.params.transaction_id, token: input.query.token };
    const result = await this.rpc.call<BuyerReturnResult>(transactionsPatterns.buyerReturn, request);
    reply.header('cache-control', 'no-store');
    if (result.location) {
      await reply.status(303).header('location', result.location).send();
      return;
    }
    const status = result.transaction_status.replace(/[^a-z_]/g, '');
    await reply
      .status(200)
      .header('content-type', 'text/html; charset=utf-8')
      .send(
        `<!doctype html><meta charset="utf-8"><title>Payment</title><p>Transaction status: <code>${status}</code>. You can close this window.</p>`,
      );
  }
}
