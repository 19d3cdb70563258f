import type { logCreator, logLevel } from 'kafkajs';

export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

// kafkajs's `logLevel` values, written out so that this module does not load kafkajs (kafkajs.ts);
// kafka-logging.unit.spec.ts holds them to the library's.
export const kafkaLogLevels: Readonly<Record<KafkaLogLevel, logLevel>> = {
  nothing: 0,
  error: 1,
  warn: 2,
  info: 4,
  debug: 5,
};

// pino's numeric levels, so that kafkajs lines read like the services' own logs.
const pinoLevels: Readonly<Record<number, number>> = {
  [kafkaLogLevels.error]: 50,
  [kafkaLogLevels.warn]: 40,
  [kafkaLogLevels.info]: 30,
  [kafkaLogLevels.debug]: 20,
};

/**
 * Lines kafkajs logs at WARN/ERROR for situations the adapter provokes and handles:
 * - a CreateTopics race with another client ("Topic creation errors": TOPIC_ALREADY_EXISTS; the admin call
 *   itself resolves to false),
 * - the rebalance every join or leave of a group member causes: the heartbeat answered "The group is
 *   rebalancing, so a rejoin is needed", then "The group is rebalancing, re-joining".
 */
const isExpected = (message: string, extra: Record<string, unknown>): boolean =>
  (message.startsWith('Response CreateTopics') && extra.error === 'Topic creation errors') ||
  (message.startsWith('Response Heartbeat') && String(extra.error).startsWith('The group is rebalancing')) ||
  message.startsWith('The group is rebalancing, re-joining');

/** kafkajs log entries as JSON lines on stderr (stdout stays free for CLI output), expected noise dropped. */
export const stderrLogCreator: logCreator =
  () =>
  ({ namespace, level, log }) => {
    const { message, timestamp, logger: _logger, ...extra } = log;
    if (isExpected(message, extra)) return;
    const line = {
      level: pinoLevels[level] ?? 30,
      time: Date.parse(timestamp) || Date.now(),
      name: `kafkajs:${namespace}`,
      msg: message,
      ...extra,
    };
    process.stderr.write(`${JSON.stringify(line)}\n`);
  };
