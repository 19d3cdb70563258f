/**
 * The merchant's checkout session endpoints (`/checkout/sessions…`): validated at the edge, served by the
 * transactions service. A session of another merchant account does not exist (404).
 */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  checkoutSessionCreateSchema,
  checkoutSessionPatterns,
  checkoutSessionSchema,
  checkoutSessionUpdateSchema,
  type CheckoutSession,
  type CheckoutSessionCreateInput,
  type CheckoutSessionCreateRequest,
  type CheckoutSessionRef,
  type CheckoutSessionUpdateInput,
  type CheckoutSessionUpdateRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';

export const checkoutSessionTags = ['Checkout sessions'];
// The spec grants embed to the gift card endpoints and POST /transactions only; browser integrations get a session from their server.
const read = { anyOf: ['checkout-sessions.read'] };
const write = { anyOf: ['checkout-sessions.write'] };

export const bySession = z.object({ session_id: z.uuid() });
export type BySession = z.infer<typeof bySession>;

const refOf = (caller: Caller, params: BySession): CheckoutSessionRef => ({
  merchant_account_id: accountOf(caller),
  checkout_session_id: params.session_id,
});

@Controller()
export class CheckoutSessionsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'create_checkout_session',
    method: 'POST',
    path: '/checkout/sessions',
    summary:
      'Open a checkout session: the buyer’s card is attached to it by the secure fields, then one transaction pays with it. The body is optional',
    tags: checkoutSessionTags,
    auth: write,
    body: checkoutSessionCreateSchema,
    status: 201,
    response: { description: 'The new session', schema: checkoutSessionSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, CheckoutSessionCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<CheckoutSession> {
    const request: CheckoutSessionCreateRequest = { merchant_account_id: accountOf(caller), body: input.body };
    return this.rpc.call(checkoutSessionPatterns.create, request);
  }

  @Endpoint({
    operationId: 'get_checkout_session',
    method: 'GET',
    path: '/checkout/sessions/{session_id}',
    summary: 'Get a checkout session (an expired or used one too), with the summary of the card attached to it',
    tags: checkoutSessionTags,
    auth: read,
    params: bySession,
    status: 200,
    response: { description: 'The session', schema: checkoutSessionSchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, BySession>,
    @CallerOf() caller: Caller,
  ): Promise<CheckoutSession> {
    return this.rpc.call(checkoutSessionPatterns.get, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'update_checkout_session',
    method: 'PUT',
    path: '/checkout/sessions/{session_id}',
    summary:
      'Update a checkout session: the fields given replace its own (null clears one), `expires_in` counts again from now. ' +
      'An expired session is a 400 (`checkout_session_expired`), a used one a 400 (`checkout_session_used`)',
    tags: checkoutSessionTags,
    auth: write,
    params: bySession,
    body: checkoutSessionUpdateSchema,
    status: 200,
    response: { description: 'The updated session', schema: checkoutSessionSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, CheckoutSessionUpdateInput, BySession>,
    @CallerOf() caller: Caller,
  ): Promise<CheckoutSession> {
    const request: CheckoutSessionUpdateRequest = { ...refOf(caller, input.params), body: input.body };
    return this.rpc.call(checkoutSessionPatterns.update, request);
  }

  @Endpoint({
    operationId: 'delete_checkout_session',
    method: 'DELETE',
    path: '/checkout/sessions/{session_id}',
    summary:
      'Delete a checkout session; the card attached to it is removed from the vault unless a transaction used it',
    tags: checkoutSessionTags,
    auth: write,
    params: bySession,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, BySession>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(checkoutSessionPatterns.delete, refOf(caller, input.params));
  }
}
