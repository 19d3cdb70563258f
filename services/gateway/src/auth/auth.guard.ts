/**
 * The one guard: reads the endpoint's declaration, authenticates the bearer JWT (its shape first: `token-shape.ts`),
 * checks the endpoint's scopes against the token's `scopes` claim and the key's roles, and resolves the merchant
 * account.
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, ENDPOINT_METADATA, type EndpointSpec } from '@switchyard/api';
import { AuthenticationError, authorizedScope, type TokenVerifier } from '@switchyard/auth';
import { DEFAULT_MERCHANT_ACCOUNT_ID } from '@switchyard/contracts';
import type { FastifyRequest } from 'fastify';
import { KEY_USAGE, TOKEN_VERIFIER } from '../tokens';
import type { KeyUsageRecorder } from './key-usage-recorder';
import { CALLER, type Caller } from './caller';
import { tokenShapeProblem } from './token-shape';

export const MERCHANT_ACCOUNT_HEADER = 'x-service-merchant-account-id';

@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Inject(KEY_USAGE) private readonly keyUsage: KeyUsageRecorder,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const spec = this.reflector.get<EndpointSpec | undefined>(ENDPOINT_METADATA, context.getHandler());
    if (!spec || spec.auth === 'public') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & { [CALLER]?: Caller }>();

    const token = bearerToken(request.headers.authorization);
    const shapeProblem = tokenShapeProblem(token);
    if (shapeProblem) throw ApiError.unauthorized(`No valid API authentication found: ${shapeProblem}`);
    let verified;
    try {
      verified = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof AuthenticationError)
        throw ApiError.unauthorized(`No valid API authentication found: ${error.message}`);
      throw error;
    }

    const scope = authorizedScope(spec.auth.anyOf, verified.claims.scopes, verified.key.permissions);
    if (!scope) {
      throw ApiError.forbidden(
        `This endpoint needs the scope ${spec.auth.anyOf.join(' or ')}, granted by both the token and the roles of its API key`,
      );
    }

    let merchantAccountId: string | null = null;
    if (spec.merchantAccount !== 'ignored') {
      const header = request.headers[MERCHANT_ACCOUNT_HEADER];
      merchantAccountId = typeof header === 'string' && header !== '' ? header : DEFAULT_MERCHANT_ACCOUNT_ID;
      const allowed = verified.key.merchantAccountIds;
      if (allowed.length > 0 && !allowed.includes(merchantAccountId)) {
        throw ApiError.forbidden(`This API key is not allowed to act on merchant account ${merchantAccountId}`);
      }
    }

    this.keyUsage.record(verified.key.id);
    request[CALLER] = {
      apiKeyPairId: verified.key.id,
      kid: verified.key.kid,
      scopes: verified.claims.scopes,
      scope,
      merchantAccountId,
      merchantAccountIds: verified.key.merchantAccountIds,
      permissions: verified.key.permissions,
      claims: verified.claims,
    };
    return true;
  }
}

function bearerToken(header: string | undefined): string {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) throw ApiError.unauthorized('No valid API authentication found: send Authorization: Bearer <JWT>');
  return match[1];
}
