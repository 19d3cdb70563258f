/**
 * The message bus seen from its consumers: messages parked on dead-letter topics and what became of them, the
 * streams parked now, and each consumer group's lag per partition. Labels are topics, groups and partitions: a
 * bounded set (the gateway's key-cache group has one name per process start).
 */
import { Counter, Gauge } from 'prom-client';
import { registry } from './registry';

export type DeadLetterReason = 'failed' | 'behind-parked';
export type DeadLetterOutcome = 'replayed' | 'replay_failed' | 'discarded';

const deadLetters = new Counter({
  name: 'switchyard_bus_dead_letters_total',
  help: 'Messages parked on a dead-letter topic: failed (the handler failed every attempt) or behind-parked (an earlier message of their stream is parked).',
  labelNames: ['group', 'topic', 'reason'] as const,
  registers: [registry],
});

const deadLetterOutcomes = new Counter({
  name: 'switchyard_bus_dead_letter_outcomes_total',
  help: 'Parked messages handled again by a replay (replayed), failing again in one (replay_failed), or dropped by a discard (discarded).',
  labelNames: ['group', 'topic', 'outcome'] as const,
  registers: [registry],
});

export interface ParkedStreamCount {
  readonly group: string;
  readonly topic: string;
  readonly streams: number;
}

export interface ConsumerLag {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  /** Messages in the partition after the group's committed offset. */
  readonly lag: number;
}

const parkedSources = new Set<() => readonly ParkedStreamCount[]>();
const lagSources = new Set<() => Promise<readonly ConsumerLag[]>>();

new Gauge({
  name: 'switchyard_bus_parked_streams',
  help: 'Streams (message keys) whose messages wait on a dead-letter topic for a replay or a discard, per consumer group and topic, as this process sees its partitions.',
  labelNames: ['group', 'topic'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const source of parkedSources)
      for (const { group, topic, streams } of source()) this.inc({ group, topic }, streams);
  },
});

new Gauge({
  name: 'switchyard_bus_consumer_lag',
  help: "Messages a consumer group has still to handle, per topic and partition: the partition's end minus the group's committed offset, read when scraped.",
  labelNames: ['group', 'topic', 'partition'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const answers = await Promise.allSettled([...lagSources].map((source) => source()));
    for (const answer of answers) {
      if (answer.status !== 'fulfilled') continue; // a broker that does not answer shows as missing samples
      for (const { group, topic, partition, lag } of answer.value)
        this.set({ group, topic, partition: String(partition) }, lag);
    }
  },
});

export function countDeadLetter(group: string, topic: string, reason: DeadLetterReason): void {
  deadLetters.inc({ group, topic, reason });
}

export function countDeadLetterOutcome(group: string, topic: string, outcome: DeadLetterOutcome): void {
  deadLetterOutcomes.inc({ group, topic, outcome });
}

/** Adds a subscription's parked streams to the gauge; the function returned takes them away (when it stops). */
export function registerParkedStreams(source: () => readonly ParkedStreamCount[]): () => void {
  parkedSources.add(source);
  return () => void parkedSources.delete(source);
}

/** Adds a subscription's lag to the gauge, asked when scraped; the function returned takes it away. */
export function registerConsumerLag(source: () => Promise<readonly ConsumerLag[]>): () => void {
  lagSources.add(source);
  return () => void lagSources.delete(source);
}
