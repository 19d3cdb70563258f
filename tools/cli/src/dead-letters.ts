/**
 * `dead-letters list | replay | discard`: messages a consumer group parked after its handler failed every attempt,
 * and the messages of their streams parked behind them (docs/operations.md, "Dead letters"). Against Kafka
 * (`--source kafka`: the `<topic>.dead-letter` topics and the groups' committed offsets) or the embedded runtime's
 * data directory (`--source data-dir`: `DATA_DIR/bus.db`). Replay and discard are requests: the consumer group
 * carries them out when it runs; `replay` waits for that and shows its progress.
 */
import { kafkaBrokers, type Settings } from '@switchyard/config';
import {
  KafkaDeadLetterLog,
  listDeadLetters,
  requestDiscard,
  requestReplay,
  SqliteBusState,
  stillParked,
  type DeadLetterEntry,
  type DeadLetterFilter,
  type DeadLetterLog,
  type StreamSelection,
} from '@switchyard/bus';

export type DeadLetterSource = 'kafka' | 'data-dir';

/** Kafka when `KAFKA_BROKERS` is set in the environment (a distributed installation), else the data directory. */
export const defaultSource = (env: NodeJS.ProcessEnv = process.env): DeadLetterSource =>
  env.KAFKA_BROKERS ? 'kafka' : 'data-dir';

/** The log, or null when the data directory has no bus state (nothing was ever parked there). */
function openLog(settings: Settings, source: DeadLetterSource): DeadLetterLog | null {
  if (source === 'kafka') return new KafkaDeadLetterLog({ brokers: kafkaBrokers(settings) });
  return SqliteBusState.openExisting(settings.dataDir);
}

async function withLog<T>(
  settings: Settings,
  source: DeadLetterSource,
  action: (log: DeadLetterLog) => Promise<T>,
  none: T,
): Promise<T> {
  const log = openLog(settings, source);
  if (!log) return none;
  try {
    return await action(log);
  } finally {
    await log.close();
  }
}

export const deadLettersList = (
  settings: Settings,
  source: DeadLetterSource,
  filter: DeadLetterFilter,
): Promise<DeadLetterEntry[]> => withLog(settings, source, (log) => listDeadLetters(log, filter), []);

export interface ReplayOutcome {
  readonly requested: { readonly streams: number; readonly messages: number };
  /** Streams replayed to the end and released. */
  readonly released: string[];
  /** Streams still parked when the wait ended, with their pending entries. */
  readonly still_parked: Record<string, number>;
}

/**
 * Requests the replay, then (unless `waitSeconds` is 0) follows it until every selected stream is released: messages
 * parked behind a stream while its replay ran are requested too. Progress goes to `progress` (stderr).
 */
export async function deadLettersReplay(
  settings: Settings,
  source: DeadLetterSource,
  selection: StreamSelection,
  waitSeconds: number,
  progress: (line: string) => void,
): Promise<ReplayOutcome> {
  const empty: ReplayOutcome = { requested: { streams: 0, messages: 0 }, released: [], still_parked: {} };
  return withLog(
    settings,
    source,
    async (log) => {
      const requested = await requestReplay(log, selection);
      const through = new Map(requested.through);
      let messages = requested.messages;
      progress(
        `replay requested: ${requested.messages} message(s) of ${requested.streams} stream(s) of group ${selection.group} on ${selection.topic}`,
      );
      const streams = [...through.keys()];
      if (waitSeconds === 0 || streams.length === 0)
        return {
          requested,
          released: [],
          still_parked: waitSeconds === 0 ? Object.fromEntries(requested.through) : {},
        };
      const deadline = Date.now() + waitSeconds * 1000;
      let remaining = new Map<string, number[]>();
      let reported = -1;
      for (;;) {
        const parked = await stillParked(log, selection);
        remaining = new Map(streams.filter((key) => parked.has(key)).map((key) => [key, parked.get(key)!]));
        const released = streams.length - remaining.size;
        if (released !== reported) progress(`${released} of ${streams.length} stream(s) released`);
        reported = released;
        if (remaining.size === 0 || Date.now() > deadline) break;
        // Parked behind the stream while its replay ran: past what was requested, so requested now.
        for (const [key, pending] of remaining) {
          if (pending.every((offset) => offset > (through.get(key) ?? -1))) {
            const more = await requestReplay(log, { ...selection, key });
            messages += more.messages;
            for (const [stream, last] of more.through) through.set(stream, last);
            progress(`stream ${key}: ${more.messages} message(s) parked behind it meanwhile, requested too`);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return {
        requested: { streams: streams.length, messages },
        released: streams.filter((key) => !remaining.has(key)),
        still_parked: Object.fromEntries([...remaining].map(([key, pending]) => [key, pending.length])),
      };
    },
    empty,
  );
}

export const deadLettersDiscard = (settings: Settings, source: DeadLetterSource, selection: StreamSelection) =>
  withLog(
    settings,
    source,
    async (log) => requestDiscard(log, selection).then(({ streams, messages }) => ({ streams, messages })),
    { streams: 0, messages: 0 },
  );
