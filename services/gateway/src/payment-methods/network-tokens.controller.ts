/**
 * Network tokens of a stored card (`/payment-methods/{payment_method_id}/network-tokens…`): validated at the edge,
 * served by the transactions service's network tokens slice, which asks the card network's token service.
 */
import { Controller, Header, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  cryptogramCreateSchema,
  cryptogramSchema,
  networkTokenCreateSchema,
  networkTokenPatterns,
  networkTokenSchema,
  networkTokensSchema,
  type Cryptogram,
  type CryptogramCreateInput,
  type CryptogramCreateRequest,
  type NetworkToken,
  type NetworkTokenCreateInput,
  type NetworkTokenCreateRequest,
  type NetworkTokenRef,
  type NetworkTokens,
  type NetworkTokenScope,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';

const tags = ['Network tokens'];
const read = { anyOf: ['payment-methods.read'] };
const write = { anyOf: ['payment-methods.write'] };
const path = '/payment-methods/{payment_method_id}/network-tokens';

const byPaymentMethod = z.object({ payment_method_id: z.uuid() });
type ByPaymentMethod = z.infer<typeof byPaymentMethod>;
const byToken = byPaymentMethod.extend({ network_token_id: z.uuid() });
type ByToken = z.infer<typeof byToken>;

const scopeOf = (caller: Caller, params: ByPaymentMethod): NetworkTokenScope => ({
  merchant_account_id: accountOf(caller),
  payment_method_id: params.payment_method_id,
});
const refOf = (caller: Caller, params: ByToken): NetworkTokenRef => ({
  ...scopeOf(caller, params),
  network_token_id: params.network_token_id,
});

/**
 * A payment method of another merchant account, or a token of another payment method, does not exist (404). The
 * token service unreachable: 502; no answer in time: 504.
 */
@Controller()
export class NetworkTokensController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_payment_method_network_tokens',
    method: 'GET',
    path,
    summary: "List a stored card's network tokens (active or suspended; a deleted token is gone)",
    tags,
    auth: read,
    params: byPaymentMethod,
    status: 200,
    response: { description: 'The network tokens', schema: networkTokensSchema },
  })
  @Header('Cache-Control', 'no-store')
  list(
    @Input() input: EndpointInput<unknown, unknown, ByPaymentMethod>,
    @CallerOf() caller: Caller,
  ): Promise<NetworkTokens> {
    return this.rpc.call(networkTokenPatterns.list, scopeOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'create_payment_method_network_token',
    method: 'POST',
    path,
    summary:
      'Provision a network token for a stored card (`succeeded`) at its network. Off unless API provisioning is enabled (403). ' +
      'Needs `network_tokens_enabled` on the merchant account; a Discover card also needs `discover_network_tokens_requestor_id` and ' +
      '`discover_network_tokens_app_id` (400 `discover_network_token_settings_missing`). A card has at most one token: another while it has one is a 409. ' +
      'A refusal of the network is a 400 whose detail `type` is its code (e.g. `card_not_eligible`). The security code is sent to the network, never stored',
    tags,
    auth: write,
    params: byPaymentMethod,
    body: networkTokenCreateSchema,
    status: 201,
    response: { description: 'The new network token (`active`)', schema: networkTokenSchema },
  })
  @Header('Cache-Control', 'no-store')
  create(
    @Input() input: EndpointInput<unknown, NetworkTokenCreateInput, ByPaymentMethod>,
    @CallerOf() caller: Caller,
  ): Promise<NetworkToken> {
    const request: NetworkTokenCreateRequest = { ...scopeOf(caller, input.params), body: input.body };
    return this.rpc.call(networkTokenPatterns.create, request);
  }

  @Endpoint({
    operationId: 'delete_payment_method_network_token',
    method: 'DELETE',
    path: `${path}/{network_token_id}`,
    summary: 'Delete a network token at its network, for good',
    tags,
    auth: write,
    params: byToken,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ByToken>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(networkTokenPatterns.delete, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'suspend_payment_method_network_token',
    method: 'POST',
    path: `${path}/{network_token_id}/suspend`,
    summary:
      'Suspend a network token: no cryptograms and no payments with it until it is resumed. Suspending a suspended token changes nothing',
    tags,
    auth: write,
    params: byToken,
    status: 200,
    response: { description: 'The network token (`suspended`)', schema: networkTokenSchema },
  })
  @Header('Cache-Control', 'no-store')
  suspend(@Input() input: EndpointInput<unknown, unknown, ByToken>, @CallerOf() caller: Caller): Promise<NetworkToken> {
    return this.rpc.call(networkTokenPatterns.suspend, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'resume_payment_method_network_token',
    method: 'POST',
    path: `${path}/{network_token_id}/resume`,
    summary: 'Resume a suspended network token. Resuming an active token changes nothing',
    tags,
    auth: write,
    params: byToken,
    status: 200,
    response: { description: 'The network token (`active`)', schema: networkTokenSchema },
  })
  @Header('Cache-Control', 'no-store')
  resume(@Input() input: EndpointInput<unknown, unknown, ByToken>, @CallerOf() caller: Caller): Promise<NetworkToken> {
    return this.rpc.call(networkTokenPatterns.resume, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'create_payment_method_network_token_cryptogram',
    method: 'POST',
    path: `${path}/{network_token_id}/cryptogram`,
    summary:
      'Get a cryptogram for one payment with an active network token (a suspended one: 400 `network_token_not_active`)',
    tags,
    auth: write,
    params: byToken,
    body: cryptogramCreateSchema,
    status: 201,
    response: { description: 'The cryptogram', schema: cryptogramSchema },
  })
  @Header('Cache-Control', 'no-store')
  cryptogram(
    @Input() input: EndpointInput<unknown, CryptogramCreateInput, ByToken>,
    @CallerOf() caller: Caller,
  ): Promise<Cryptogram> {
    const request: CryptogramCreateRequest = { ...refOf(caller, input.params), body: input.body };
    return this.rpc.call(networkTokenPatterns.cryptogram, request);
  }
}
