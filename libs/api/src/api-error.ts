/**
 * The error body of the spec (every status except 422), and the one error class the code throws to produce it.
 * Rendered once, at the HTTP edge (`api-exception.filter.ts` in the gateway); services return the same shape as a
 * value over RPC.
 */

export type ErrorLocation = 'body' | 'query' | 'path' | 'header' | 'unknown';

export interface ErrorDetail {
  readonly location: ErrorLocation;
  /** JSON pointer into the located part, e.g. `/payment_method/buyer_id`. */
  readonly pointer: string;
  readonly message: string;
  readonly type: string;
}

export const errorCodes = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'duplicate_record',
  // Not in the spec's table: HTTP-level limits, a body over the gateway's limit (issue 11) and a request head over
  // Node's (answered before the application, in this body all the same).
  413: 'payload_too_large',
  425: 'too_early',
  429: 'too_many_requests',
  431: 'request_header_fields_too_large',
  500: 'server_error',
  502: 'bad_gateway',
  504: 'gateway_timeout',
} as const;

export type ErrorStatus = keyof typeof errorCodes;

export interface ErrorBody {
  readonly type: 'error';
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly details: readonly ErrorDetail[];
  readonly resource_id?: string;
}

const serverFailureMessage = 'Request could not be processed';

export class ApiError extends Error {
  readonly code: string;
  /**
   * The same request may succeed if sent again: 425, 429, every 5xx, and a refusal marked so (a 409 for a race lost
   * to another writer). Idempotency stores never keep such an answer against a key.
   */
  readonly retryable: boolean;

  constructor(
    readonly status: ErrorStatus,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
    options: { code?: string; resourceId?: string; cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = options.code ?? errorCodes[status];
    this.resourceId = options.resourceId;
    this.retryable = options.retryable ?? (status === 425 || status === 429 || status >= 500);
  }

  readonly resourceId: string | undefined;

  /**
   * Another service did not answer (502, 504): trying again later can help. Retry policies read this flag, as they
   * read kafkajs's and the event store's (the bus does not park a message whose handler failed this way).
   */
  get retriable(): boolean {
    return this.status === 502 || this.status === 504;
  }

  static badRequest(message: string, details: readonly ErrorDetail[] = []): ApiError {
    return new ApiError(400, message, details);
  }
  static unauthorized(message = 'No valid API authentication found'): ApiError {
    return new ApiError(401, message);
  }
  static forbidden(message: string): ApiError {
    return new ApiError(403, message);
  }
  static notFound(message = 'The resource could not be found'): ApiError {
    return new ApiError(404, message);
  }
  static methodNotAllowed(message = 'Method Not Allowed'): ApiError {
    return new ApiError(405, message);
  }
  /** A request body over `limitBytes` (the gateway's body limit for the route). */
  static payloadTooLarge(limitBytes: number): ApiError {
    return new ApiError(413, `The request body is larger than the limit of ${limitBytes} bytes`, [
      { location: 'body', pointer: '', message: `at most ${limitBytes} bytes`, type: 'payload_too_large' },
    ]);
  }
  static duplicate(message: string, resourceId: string): ApiError {
    return new ApiError(409, message, [], { resourceId });
  }
  static serverError(cause?: unknown): ApiError {
    return new ApiError(500, serverFailureMessage, [], { cause });
  }
  static badGateway(cause?: unknown): ApiError {
    return new ApiError(502, serverFailureMessage, [], { cause });
  }
  static gatewayTimeout(cause?: unknown): ApiError {
    return new ApiError(504, serverFailureMessage, [], { cause });
  }

  toBody(): ErrorBody {
    return {
      type: 'error',
      code: this.code,
      status: this.status,
      message: this.message,
      details: this.details,
      ...(this.resourceId !== undefined ? { resource_id: this.resourceId } : {}),
    };
  }

  static fromBody(body: ErrorBody): ApiError {
    const status = (body.status in errorCodes ? body.status : 500) as ErrorStatus;
    return new ApiError(status, body.message, body.details, { code: body.code, resourceId: body.resource_id });
  }
}
