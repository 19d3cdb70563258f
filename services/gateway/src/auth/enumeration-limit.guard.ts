/**
 * The enumeration-prevention rate limit (spec, Limits; docs/rate-limits.md): about `perMinute` requests a minute
 * per embed token across every endpoint declared `enumerationLimit: 'embed-token'` (POST /gift-cards/balances,
 * POST /gift-cards, POST /transactions), and per checkout session id on those declared `'checkout-session'` (its
 * fields and card details). Server-to-server tokens are never limited. Runs after `AuthGuard` (registered after it),
 * so the caller is known; a refusal is 429 `too_many_requests` in the spec's body with `Retry-After` in whole
 * seconds, rounded up.
 */
import { createHash } from 'node:crypto';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, ENDPOINT_METADATA, type EndpointSpec } from '@switchyard/api';
import type { RateLimiter } from '@switchyard/kv';
import { countRateLimitRefusal } from '@switchyard/metrics';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CALLER, type Caller } from './caller';

export const ENUMERATION_LIMIT = Symbol('ENUMERATION_LIMIT');

/** ENUMERATION_RATE_LIMIT_PER_MINUTE's default: the spec's "approximately 50 requests per minute". */
export const DEFAULT_ENUMERATION_LIMIT_PER_MINUTE = 50;
export const ENUMERATION_LIMIT_PERIOD_MS = 60_000;

export interface EnumerationLimitSettings {
  /** In memory (embedded), Redis with an in-memory fallback (distributed). */
  readonly limiter: RateLimiter;
  /** Requests a minute per embed token, and per checkout session. */
  readonly perMinute: number;
}

/** The scope of browser (embed) tokens. */
const EMBED_SCOPE = 'embed';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type GuardedRequest = FastifyRequest & { [CALLER]?: Caller; params?: Record<string, unknown> };

/**
 * The bucket a request counts against, or null when it is not limited. An embed request is one the auth guard let
 * in by the `embed` scope (the same rule that applies the token's pins, `embed-claims.ts`); a token that reached the
 * endpoint by a server-to-server scope (`transactions.write`, `gift-cards.read`, …) is never limited, even if it
 * also carries `embed` — whoever holds it can do far more than these three endpoints anyway. The token is keyed by
 * its SHA-256 (never kept as such): one bucket per token string across every `embed-token` endpoint.
 */
export function enumerationBucket(
  kind: NonNullable<EndpointSpec['enumerationLimit']>,
  request: GuardedRequest,
): string | null {
  if (kind === 'embed-token') {
    const caller = request[CALLER];
    if (!caller)
      throw new Error(
        'EnumerationLimitGuard ran on an endpoint without an authenticated caller: register it after AuthGuard, on token endpoints',
      );
    if (caller.scope !== EMBED_SCOPE) return null;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!token) throw new Error('EnumerationLimitGuard found no bearer token on an authenticated request');
    return `enumeration:embed-token:${createHash('sha256').update(token).digest('base64url')}`;
  }
  const sessionId = request.params?.session_id;
  // Not a UUID: the request is refused by validation (422) without reaching a session; nothing to count.
  if (typeof sessionId !== 'string' || !UUID.test(sessionId)) return null;
  return `enumeration:checkout-session:${sessionId.toLowerCase()}`;
}

@Injectable()
export class EnumerationLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ENUMERATION_LIMIT) private readonly settings: EnumerationLimitSettings,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const spec = this.reflector.get<EndpointSpec | undefined>(ENDPOINT_METADATA, context.getHandler());
    const kind = spec?.enumerationLimit;
    if (!kind) return true;
    const http = context.switchToHttp();
    const bucket = enumerationBucket(kind, http.getRequest<GuardedRequest>());
    if (bucket === null) return true;

    const decision = await this.settings.limiter.consume(bucket, {
      count: this.settings.perMinute,
      periodMs: ENUMERATION_LIMIT_PERIOD_MS,
    });
    if (decision.allowed) return true;
    countRateLimitRefusal(kind);

    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    http.getResponse<FastifyReply>().header('retry-after', String(seconds));
    const who =
      kind === 'embed-token'
        ? 'an embed token (POST /gift-cards/balances, POST /gift-cards and POST /transactions together); use a new token per checkout'
        : 'a checkout session; use a new checkout session per checkout';
    throw new ApiError(
      429,
      `Too many requests: at most ${this.settings.perMinute} a minute for ${who}. Retry after ${seconds} s`,
    );
  }
}
