/**
 * One declaration per HTTP endpoint: method, path, the scopes that reach it, and the zod schemas of its input and
 * output. The gateway's routes, its scope guard, its input validation, its 405 answers and the OpenAPI document
 * are all read from these declarations, so they cannot drift apart.
 */
import type * as Nest from '@nestjs/common';
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface EndpointResponse {
  readonly description: string;
  readonly schema?: z.ZodType;
}

export interface EndpointSpec {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** OpenAPI style: `/api-key-pairs/{api_key_pair_id}`. */
  readonly path: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** `public`: no token. Otherwise the token (and its key's roles) needs one of these scopes. */
  readonly auth: 'public' | { readonly anyOf: readonly string[] };
  /** How `x-service-merchant-account-id` is used: `scoped` (default) selects the account; `ignored` has no effect. */
  readonly merchantAccount?: 'scoped' | 'ignored';
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly status: number;
  readonly response?: EndpointResponse;
  /**
   * The enumeration-prevention rate limit (spec, Limits; docs/rate-limits.md), applied by the gateway's
   * `EnumerationLimitGuard`: `embed-token` counts requests of a token carrying the `embed` scope, one bucket per
   * token across every endpoint so marked (server-to-server tokens are never limited); `checkout-session` counts
   * requests per `{session_id}` of the path. Over the limit: 429 `too_many_requests` with `Retry-After`.
   */
  readonly enumerationLimit?: 'embed-token' | 'checkout-session';
  /**
   * The endpoint honours `Idempotency-Key` (the first answer is kept and replayed): the document declares the header,
   * and clients may retry the write with the same key.
   */
  readonly idempotencyKey?: boolean;
}

export const ENDPOINT_METADATA = 'switchyard:endpoint';

const declared: EndpointSpec[] = [];

/** Every endpoint declared in this process, in declaration order. */
export const declaredEndpoints = (): readonly EndpointSpec[] => declared;

export const toRoutePath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

/** Declares a route on a Nest controller method (the controller itself has no path prefix). */
export function Endpoint(spec: EndpointSpec): MethodDecorator {
  declared.push(spec);
  // Nest is loaded by the first declaration, not by this package: what serves no HTTP and imports it for its errors
  // and pages (the vault's thread) never loads Nest's 240 modules (docs/performance.md, Start-up and memory).
  const { applyDecorators, HttpCode, RequestMapping, RequestMethod, SetMetadata } =
    require('@nestjs/common') as typeof Nest;
  return applyDecorators(
    RequestMapping({ path: toRoutePath(spec.path), method: RequestMethod[spec.method] }),
    HttpCode(spec.status),
    SetMetadata(ENDPOINT_METADATA, spec),
  );
}

/** The methods declared for a concrete request path (for 405 and the `Allow` header). */
export function methodsForPath(path: string): HttpMethod[] {
  const methods = new Set<HttpMethod>();
  for (const spec of declared) {
    if (pathPattern(spec.path).test(path)) methods.add(spec.method);
  }
  return [...methods];
}

const patterns = new Map<string, RegExp>();
function pathPattern(path: string): RegExp {
  let pattern = patterns.get(path);
  if (!pattern) {
    const escaped = path
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    pattern = new RegExp(`^${escaped}/?$`);
    patterns.set(path, pattern);
  }
  return pattern;
}
