/**
 * The HTTP client handed to Adyen's official library (`new Client(config, httpClient)`): every call goes through the
 * connection's `ProviderFetch` (the vault's forwarder for card-bearing calls), to the Checkout API version this
 * connector speaks and was proven against (v71), at the connection's base URL. The library builds the request body
 * and path; this decides where it goes and what a failure means: 5xx and refused connections throw a retriable
 * ConnectorUnavailableError, a 4xx is an `AdyenRejection` (a value to map), no answer an `AdyenNoAnswer`.
 */
import type { Client } from '@adyen/api-library';
import { ConnectorUnavailableError } from '../connector-errors';
import { notSentCode, type ProviderFetch } from '../provider-fetch';

type AdyenHttpClient = NonNullable<ConstructorParameters<typeof Client>[1]>;
type RequestOptions = Parameters<AdyenHttpClient['request']>[4];

export const adyenCheckoutVersion = 'v71';

/** Adyen answered 4xx: the request was refused as it stands (credentials, validation). */
export class AdyenRejection extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string | undefined,
    readonly errorMessage: string,
  ) {
    super(`Adyen answered ${status}${errorCode ? ` (${errorCode})` : ''}: ${errorMessage}`);
    this.name = 'AdyenRejection';
  }
}

/** No answer: timed out, or the connection broke after the request was sent. Adyen may have acted on it. */
export class AdyenNoAnswer extends Error {
  constructor(readonly timedOut: boolean) {
    super(timedOut ? 'Adyen did not answer in time' : 'the connection to Adyen broke after sending');
    this.name = 'AdyenNoAnswer';
  }
}

export class AdyenFetchClient implements AdyenHttpClient {
  constructor(
    private readonly options: {
      readonly checkoutBaseUrl: string;
      readonly fetch: ProviderFetch;
      readonly timeoutMs: number;
    },
  ) {}

  async request(
    endpoint: string,
    json: string | Buffer,
    config: { apiKey?: string },
    _apiKeyRequired: boolean,
    requestOptions?: RequestOptions,
  ): Promise<string> {
    // The library's own base (…/v72) gives way to ours: only the operation's path is kept.
    const path = new URL(endpoint).pathname.replace(/^.*?\/v\d+(?=\/)/, '');
    const url = `${this.options.checkoutBaseUrl.replace(/\/$/, '')}/${adyenCheckoutVersion}${path}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': config.apiKey ?? '',
    };
    if (requestOptions?.idempotencyKey) headers['idempotency-key'] = requestOptions.idempotencyKey;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    const call = `${requestOptions?.method ?? 'POST'} ${path}`;
    try {
      const response = await this.options.fetch(url, {
        method: requestOptions?.method ?? 'POST',
        headers,
        body: typeof json === 'string' ? json : new Uint8Array(json),
        signal: controller.signal,
      });
      const text = await response.text();
      if (response.status >= 500)
        throw new ConnectorUnavailableError(`Adyen answered ${response.status} to ${call}`, true, response.status);
      if (response.status >= 400) {
        const error = parseError(text);
        throw new AdyenRejection(response.status, error.errorCode, error.message ?? `${response.status} to ${call}`);
      }
      return text;
    } catch (error) {
      if (error instanceof ConnectorUnavailableError || error instanceof AdyenRejection) throw error;
      if (controller.signal.aborted) throw new AdyenNoAnswer(true);
      const code = notSentCode(error);
      if (code) throw new ConnectorUnavailableError(`Adyen unreachable (${code})`, true, undefined, { cause: error });
      throw new AdyenNoAnswer(false);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Adyen's error body: `{status, errorCode, message, errorType, pspReference}`. */
function parseError(text: string): { errorCode?: string; message?: string } {
  try {
    const body = JSON.parse(text) as { errorCode?: unknown; message?: unknown };
    return {
      ...(typeof body.errorCode === 'string' ? { errorCode: body.errorCode } : {}),
      ...(typeof body.message === 'string' ? { message: body.message } : {}),
    };
  } catch {
    return {};
  }
}
