/**
 * What the transaction endpoints share: path parameters, scopes, the merchant account and the actor of the request,
 * and the two headers of the transaction writes (`Idempotency-Key`, `Prefer`).
 */
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiError, type PageQuery } from '@switchyard/api';
import {
  DEFAULT_MERCHANT_ACCOUNT_ID,
  type TransactionPageRequest,
  type TransactionRequest,
} from '@switchyard/contracts';
import type { RpcCallOptions } from '@switchyard/rpc';
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { Caller } from '../auth/caller';

export const tags = ['Transactions'];
export const read = { anyOf: ['transactions.read'] };
export const write = { anyOf: ['transactions.write'] };

export const byTransaction = z.object({ transaction_id: z.uuid() });
export type ByTransaction = z.infer<typeof byTransaction>;

/** The merchant account of the request (header `x-service-merchant-account-id`, default `default`). */
export const accountOf = (caller: Caller): string => caller.merchantAccountId ?? DEFAULT_MERCHANT_ACCOUNT_ID;

/**
 * Who asks, for the events a write appends (`GET /transactions/{id}/events`, `context.explanation.actor`): the call's
 * actor, beside the payload (a service takes it only from the authenticated call, never from a payload).
 */
export const actorOf = (caller: Caller): RpcCallOptions => ({
  actor: { type: 'api-key-pair', id: caller.apiKeyPairId },
});

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The `Idempotency-Key` header when sent (1 to 255 characters, else 400); undefined when absent. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  const value = Array.isArray(key) ? key.join(', ') : key;
  if (value.length < 1 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    const message = `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long`;
    throw ApiError.badRequest(message, [
      { location: 'header', pointer: '/idempotency-key', message, type: 'invalid_idempotency_key' },
    ]);
  }
  return value;
}

/** The request's `Idempotency-Key` (see {@link idempotencyKeyOf}). */
export const IdempotencyKey = createParamDecorator((_data: unknown, context: ExecutionContext): string | undefined =>
  idempotencyKeyOf(context.switchToHttp().getRequest<FastifyRequest>().headers),
);

/** `{idempotency_key}` when the caller sent one, else nothing (the RPC payload leaves the key out). */
export const withIdempotencyKey = (key: string | undefined): { idempotency_key?: string } =>
  key === undefined ? {} : { idempotency_key: key };

/**
 * Whether `Prefer` asks for the resource type: one of its comma-separated preferences is exactly
 * `resource=<type>`, lower-case as the reference requires; every other preference is ignored.
 */
export function prefersResource(prefer: string | string[] | undefined, type: string): boolean {
  if (prefer === undefined) return false;
  const wanted = `resource=${type}`;
  return (Array.isArray(prefer) ? prefer : [prefer]).some((header) =>
    header.split(',').some((preference) => preference.trim() === wanted),
  );
}

/** Whether the request's `Prefer` header asks for the resource type given as the decorator's argument. */
export const PrefersResource = createParamDecorator((type: string, context: ExecutionContext): boolean =>
  prefersResource(context.switchToHttp().getRequest<FastifyRequest>().headers.prefer, type),
);

/** The RPC payload of a page of something of one transaction (events, captures, refunds). */
export function pageRequest(
  merchantAccountId: string,
  params: ByTransaction,
  query: PageQuery,
): TransactionPageRequest {
  return {
    merchant_account_id: merchantAccountId,
    transaction_id: params.transaction_id,
    limit: query.limit,
    ...(query.cursor ? { cursor: query.cursor } : {}),
  };
}

/** The RPC payload of an operation without a body (cancel, sync). */
export const withoutBody = (caller: Caller, params: ByTransaction): TransactionRequest<undefined> => ({
  merchant_account_id: accountOf(caller),
  transaction_id: params.transaction_id,
  body: undefined,
});
