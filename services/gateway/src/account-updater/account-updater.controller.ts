/**
 * `POST /account-updater/jobs`: schedules stored cards of the request's merchant account with the account updater,
 * served by the transactions service. 201 with the job when one or more payment methods were scheduled; 204 with no
 * body when none were (unknown ids, ineligible ones, ones already waiting in an open job, or the account updater off
 * on the merchant account). The answers arrive later, on each payment method.
 */
import { Controller, Inject, Res } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  accountUpdaterJobCreateSchema,
  accountUpdaterJobSchema,
  accountUpdaterPatterns,
  type AccountUpdaterJob,
  type AccountUpdaterJobCreateInput,
  type AccountUpdaterJobCreateRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import type { FastifyReply } from 'fastify';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';

export const accountUpdaterTags = ['Account updater'];

@Controller()
export class AccountUpdaterController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'create_account_updater_job',
    method: 'POST',
    path: '/account-updater/jobs',
    summary:
      'Schedule stored cards for an account update: the succeeded card payment methods of the merchant account that wait in no open job, ' +
      'when the merchant account has `account_updater_enabled`. Answers 201 with the job when one or more were scheduled, ' +
      '204 with no body when none were. New expiry dates and numbers arrive later and show on each payment method',
    tags: accountUpdaterTags,
    auth: { anyOf: ['account-updater.write'] },
    body: accountUpdaterJobCreateSchema,
    status: 201,
    response: {
      description: 'The scheduled job (204, no body: nothing was scheduled)',
      schema: accountUpdaterJobSchema,
    },
  })
  async create(
    @Input() input: EndpointInput<unknown, AccountUpdaterJobCreateInput>,
    @CallerOf() caller: Caller,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AccountUpdaterJob | undefined> {
    const request: AccountUpdaterJobCreateRequest = { merchant_account_id: accountOf(caller), body: input.body };
    const job = await this.rpc.call<AccountUpdaterJob | null>(accountUpdaterPatterns.createJob, request);
    if (job !== null) return job;
    reply.status(204);
    return undefined;
  }
}
