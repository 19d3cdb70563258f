/**
 * Infrastructure errors carry `retriable` (as kafkajs does): retry policy reads the flag, never the message.
 * Business outcomes are never errors; see `connector.ts`.
 */

/**
 * The provider could not be reached, or answered 5xx. The request did not take effect as far as we know.
 * `timedOut`: it gave no answer within the connector's timeout (a caller with nothing else to report answers 504).
 */
export class ConnectorUnavailableError extends Error {
  readonly type = 'connector_unavailable' as const;
  readonly timedOut: boolean;
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly status?: number,
    options?: { cause?: unknown; timedOut?: boolean },
  ) {
    super(message, options);
    this.name = 'ConnectorUnavailableError';
    this.timedOut = options?.timedOut ?? false;
  }
}

/** The provider refused the request itself (4xx, e.g. an unknown provider transaction id) or answered nonsense. */
export class ConnectorRequestRejectedError extends Error {
  readonly type = 'connector_request_rejected' as const;
  readonly retriable = false;
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ConnectorRequestRejectedError';
  }
}

export type NotificationRejection = 'missing_signature' | 'bad_signature' | 'stale_timestamp' | 'malformed_body';

/** A provider notification that must not be trusted. Answer it with 400/401; the provider may redeliver. */
export class NotificationRejectedError extends Error {
  readonly type = 'notification_rejected' as const;
  readonly retriable = false;
  constructor(
    readonly reason: NotificationRejection,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'NotificationRejectedError';
  }
}

export type ConnectorError = ConnectorUnavailableError | ConnectorRequestRejectedError | NotificationRejectedError;
