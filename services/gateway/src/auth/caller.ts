import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { VerifiedClaims } from '@switchyard/auth';

/** Who is calling, as the auth guard established it. */
export interface Caller {
  readonly apiKeyPairId: string;
  readonly kid: string;
  readonly scopes: readonly string[];
  /** The scope that let the request through. */
  readonly scope: string;
  /** The merchant account of the request (`default` when the header is absent); null where the header has no effect. */
  readonly merchantAccountId: string | null;
  /** The merchant accounts the caller's key is limited to; empty: every merchant account. */
  readonly merchantAccountIds: readonly string[];
  /** What the key's roles grant (the token's `scopes` may narrow it): e.g. whether billing details show. */
  readonly permissions: readonly string[];
  readonly claims: VerifiedClaims;
}

export const CALLER = Symbol('caller');

export const CallerOf = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<{ [CALLER]?: Caller }>();
  const caller = request[CALLER];
  if (!caller) throw new Error('CallerOf used on a public endpoint');
  return caller;
});
