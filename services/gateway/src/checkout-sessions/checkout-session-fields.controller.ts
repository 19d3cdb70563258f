/**
 * Where the secure fields library, in the buyer's browser, attaches card data to a checkout session. No token: the
 * session id is the credential (an unguessable UUID, short-lived, good for one payment), and the merchant account is
 * the session's own — the merchant account header has no effect. Declared for POST and for PUT, which the
 * reference SDK's own end-to-end test uses.
 */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint, type EndpointSpec } from '@switchyard/api';
import {
  checkoutSessionFieldsSchema,
  checkoutSessionPatterns,
  type CheckoutSessionFieldsInput,
  type CheckoutSessionFieldsRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { bySession, checkoutSessionTags, type BySession } from './checkout-sessions.controller';

const fields = (method: 'POST' | 'PUT', operationId: string): EndpointSpec => ({
  operationId,
  method,
  path: '/checkout/sessions/{session_id}/fields',
  summary:
    'Attach card data to a checkout session (called by the secure fields from the buyer’s browser; no token). Attaching again replaces the card. ' +
    'Instead of a card, `{"method":"id","id":…,"security_code":…}` chooses a stored payment method of the ' +
    'session’s merchant account with its security code typed again; the payment uses that method with that code. ' +
    'An unknown or deleted session is a 404; an expired or used one a 400 (`checkout_session_expired`, ' +
    '`checkout_session_used`); a number failing the Luhn check a 400; a stored method the account does not have, ' +
    'or that cannot pay yet, a 400 naming `payment_method.id`',
  tags: checkoutSessionTags,
  auth: 'public',
  merchantAccount: 'ignored',
  params: bySession,
  body: checkoutSessionFieldsSchema,
  status: 204,
  response: { description: 'Attached' },
  enumerationLimit: 'checkout-session',
});

@Controller()
export class CheckoutSessionFieldsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint(fields('POST', 'update_checkout_session_fields'))
  async attach(@Input() input: EndpointInput<unknown, CheckoutSessionFieldsInput, BySession>): Promise<void> {
    const request: CheckoutSessionFieldsRequest = { checkout_session_id: input.params.session_id, body: input.body };
    await this.rpc.call(checkoutSessionPatterns.attachFields, request);
  }

  @Endpoint(fields('PUT', 'put_checkout_session_fields'))
  attachByPut(@Input() input: EndpointInput<unknown, CheckoutSessionFieldsInput, BySession>): Promise<void> {
    return this.attach(input);
  }
}
