import pino, { type Logger } from 'pino';
import type { Settings } from './index';

/** Structured JSON logs on stderr (stdout stays free for the CLI's machine-readable output). */
export const createLogger = (service: string, settings: Pick<Settings, 'LOG_LEVEL'>): Logger =>
  pino({ name: service, level: settings.LOG_LEVEL }, pino.destination(2));
