/**
 * The digital wallet endpoints (`/digital-wallets…`): validated at the edge, served by the transactions service.
 * A Paze wallet's decryption key goes in and never comes back out (docs/paze.md).
 */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  digitalWalletCreateSchema,
  digitalWalletPatterns,
  digitalWalletSchema,
  digitalWalletsSchema,
  digitalWalletUpdateSchema,
  type DigitalWallet,
  type DigitalWalletCreateInput,
  type DigitalWalletCreateRequest,
  type DigitalWalletRef,
  type DigitalWalletUpdateInput,
  type DigitalWalletUpdateRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';

const tags = ['Digital wallets'];
const read = { anyOf: ['digital-wallets.read'] };
const write = { anyOf: ['digital-wallets.write'] };

const byWallet = z.object({ digital_wallet_id: z.uuid() });
type ByWallet = z.infer<typeof byWallet>;

const refOf = (caller: Caller, params: ByWallet): DigitalWalletRef => ({
  merchant_account_id: accountOf(caller),
  digital_wallet_id: params.digital_wallet_id,
});

/**
 * A merchant account's registrations with wallet providers: one per provider (a second is a 409 naming the first).
 * A wallet of another merchant account does not exist (404).
 */
@Controller()
export class DigitalWalletsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_digital_wallets',
    method: 'GET',
    path: '/digital-wallets',
    summary: "List the merchant account's digital wallets, oldest first",
    tags,
    auth: read,
    status: 200,
    response: { description: 'The digital wallets', schema: digitalWalletsSchema },
  })
  list(@CallerOf() caller: Caller): Promise<{ items: DigitalWallet[] }> {
    return this.rpc.call(digitalWalletPatterns.list, { merchant_account_id: accountOf(caller) });
  }

  @Endpoint({
    operationId: 'register_digital_wallet',
    method: 'POST',
    path: '/digital-wallets',
    summary:
      'Register the merchant account with a wallet provider (`accept_terms_and_conditions` must be true). One wallet per provider: a second is a 409. ' +
      'A `paze` wallet needs `decryption_key` (the private key Paze encrypts payloads to), kept sealed and shown only by its thumbprint',
    tags,
    auth: write,
    body: digitalWalletCreateSchema,
    status: 201,
    response: { description: 'The digital wallet', schema: digitalWalletSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, DigitalWalletCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<DigitalWallet> {
    const request: DigitalWalletCreateRequest = { merchant_account_id: accountOf(caller), body: input.body };
    return this.rpc.call(digitalWalletPatterns.create, request);
  }

  @Endpoint({
    operationId: 'get_digital_wallet',
    method: 'GET',
    path: '/digital-wallets/{digital_wallet_id}',
    summary: 'Get a digital wallet',
    tags,
    auth: read,
    params: byWallet,
    status: 200,
    response: { description: 'The digital wallet', schema: digitalWalletSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ByWallet>, @CallerOf() caller: Caller): Promise<DigitalWallet> {
    return this.rpc.call(digitalWalletPatterns.get, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'update_digital_wallet',
    method: 'PUT',
    path: '/digital-wallets/{digital_wallet_id}',
    summary:
      'Update a digital wallet: only the fields sent change (null clears an optional one); `domain_names` is replaced whole; a Paze key can be rotated',
    tags,
    auth: write,
    params: byWallet,
    body: digitalWalletUpdateSchema,
    status: 200,
    response: { description: 'The digital wallet', schema: digitalWalletSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, DigitalWalletUpdateInput, ByWallet>,
    @CallerOf() caller: Caller,
  ): Promise<DigitalWallet> {
    const request: DigitalWalletUpdateRequest = { ...refOf(caller, input.params), body: input.body };
    return this.rpc.call(digitalWalletPatterns.update, request);
  }

  @Endpoint({
    operationId: 'delete_digital_wallet',
    method: 'DELETE',
    path: '/digital-wallets/{digital_wallet_id}',
    summary: 'Delete a digital wallet (a Paze key with it); its provider can then be registered again',
    tags,
    auth: write,
    params: byWallet,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ByWallet>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(digitalWalletPatterns.delete, refOf(caller, input.params));
  }
}
