/**
 * One error class for both error bodies of the API: the standard `{type: "error", code, status, message, details}`
 * and the 422 `{detail: [{loc, msg, type, input, ctx}]}` (whose entries become `details` of the same shape).
 */

/** Where a problem is: `location` (body, query, path, header) and a JSON pointer into it. */
export interface SwitchyardErrorDetail {
  readonly location: string;
  readonly pointer: string;
  readonly message: string;
  readonly type: string;
}

/** The code given to a 422, which has none in its body. */
export const VALIDATION_ERROR_CODE = 'validation_error';

export class SwitchyardApiError extends Error {
  override readonly name = 'SwitchyardApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly SwitchyardErrorDetail[],
    /** `x-request-id` of the answer: quote it when asking about a request. */
    readonly requestId: string | undefined,
    /** The existing record of a 409 `duplicate_record`. */
    readonly resourceId: string | undefined,
    /** The body as received. */
    readonly body: unknown,
  ) {
    super(message);
  }

  /** From an answer that is not 2xx and its parsed body (undefined when it was not JSON). */
  static from(response: Response, body: unknown): SwitchyardApiError {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (isStandardError(body)) {
      return new SwitchyardApiError(
        response.status,
        body.code,
        body.message,
        body.details ?? [],
        requestId,
        body.resource_id,
        body,
      );
    }
    if (isValidationError(body)) {
      const details = body.detail.map((entry) => {
        const [location = 'unknown', ...rest] = entry.loc.map(String);
        return { location, pointer: `/${rest.join('/')}`, message: entry.msg, type: entry.type };
      });
      const message =
        details.map((detail) => `${detail.location}${detail.pointer}: ${detail.message}`).join('; ') ||
        'validation error';
      return new SwitchyardApiError(
        response.status,
        VALIDATION_ERROR_CODE,
        message,
        details,
        requestId,
        undefined,
        body,
      );
    }
    // Not one of the API's bodies (a proxy in between, say): the status says what there is to say.
    return new SwitchyardApiError(
      response.status,
      `http_${response.status}`,
      `HTTP ${response.status} ${response.statusText}`.trim(),
      [],
      requestId,
      undefined,
      body,
    );
  }
}

type StandardError = {
  type: 'error';
  code: string;
  message: string;
  details?: SwitchyardErrorDetail[];
  resource_id?: string;
};
type ValidationError = { detail: { loc: (string | number)[]; msg: string; type: string }[] };

const isStandardError = (body: unknown): body is StandardError =>
  typeof body === 'object' &&
  body !== null &&
  (body as StandardError).type === 'error' &&
  typeof (body as StandardError).code === 'string';

const isValidationError = (body: unknown): body is ValidationError =>
  typeof body === 'object' && body !== null && Array.isArray((body as ValidationError).detail);
