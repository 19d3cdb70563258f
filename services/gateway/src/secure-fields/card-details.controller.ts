/**
 * `GET /checkout/sessions/{session_id}/card-details?bin=`: BIN data for the secure fields' card number frame (its
 * `card-details-changed` event, spec Events rule 5). No token: the frame, on the service's origin, asks with the
 * session id, the credential; the transactions service refuses an unknown or deleted session (404) and an expired or
 * used one (400). Not cached: the answer depends on the session's state. Counted by the enumeration-prevention limit
 * of the session (spec, Limits), with `POST /checkout/sessions/{id}/fields`.
 */
import { Controller, Inject, Res } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  checkoutSessionCardDetailsQuerySchema,
  checkoutSessionCardDetailsSchema,
  checkoutSessionPatterns,
  type CheckoutSessionCardDetails,
  type CheckoutSessionCardDetailsQuery,
  type CheckoutSessionCardDetailsRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import type { FastifyReply } from 'fastify';
import { bySession, checkoutSessionTags, type BySession } from '../checkout-sessions/checkout-sessions.controller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';

@Controller()
export class CheckoutSessionCardDetailsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'get_checkout_session_card_details',
    method: 'GET',
    path: '/checkout/sessions/{session_id}/card-details',
    summary:
      'What BIN data says about the first 6 to 8 digits of the card number being typed (called by the secure fields’ card number frame; no token). ' +
      'An unknown or deleted session is a 404; an expired or used one a 400 (`checkout_session_expired`, `checkout_session_used`)',
    tags: checkoutSessionTags,
    auth: 'public',
    merchantAccount: 'ignored',
    // Counts with the session's fields posts: a session id is good for about 50 requests a minute in all.
    enumerationLimit: 'checkout-session',
    params: bySession,
    query: checkoutSessionCardDetailsQuerySchema,
    status: 200,
    response: {
      description: 'The issuer country, scheme, card type and additional schemes (null when unknown)',
      schema: checkoutSessionCardDetailsSchema,
    },
  })
  get(
    @Input() input: EndpointInput<CheckoutSessionCardDetailsQuery, unknown, BySession>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CheckoutSessionCardDetails> {
    reply.header('cache-control', 'no-store');
    const request: CheckoutSessionCardDetailsRequest = {
      checkout_session_id: input.params.session_id,
      bin: input.query.bin,
    };
    return this.rpc.call(checkoutSessionPatterns.cardDetails, request);
  }
}
