import { logFields } from '@switchyard/telemetry';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { Settings } from './index';

/**
 * Structured JSON logs on stderr (stdout stays free for the CLI's machine-readable output), or on `destination`.
 * Every line written while handling a request, or a message it caused, carries `request_id` and `correlation_id`
 * (and `trace_id`/`span_id` when tracing), from the context of the work (`@switchyard/telemetry`).
 */
export const createLogger = (
  service: string,
  settings: Pick<Settings, 'LOG_LEVEL'>,
  destination: DestinationStream = pino.destination(2),
): Logger => pino({ name: service, level: settings.LOG_LEVEL, mixin: logFields }, destination);
