import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';

/**
 * The consumer groups of a distributed runtime that read transactions.events from its beginning, by the group settings
 * of its environment: the gift cards' usage and, as `<group>.redemptions`, split tender's requests; the vault's.
 */
export function groupsReadingTransactionsFromTheBeginning(env: Readonly<Record<string, string | undefined>>): string[] {
  const giftCards = env.GIFT_CARDS_CONSUMER_GROUP;
  return [
    ...(giftCards ? [giftCards, `${giftCards}.redemptions`] : []),
    ...(env.VAULT_CONSUMER_GROUP ? [env.VAULT_CONSUMER_GROUP] : []),
  ];
}

export interface ConsumerGroupsAtEnd {
  readonly topic: string;
  readonly groupIds: readonly string[];
  readonly timeoutMs: number;
  /**
   * With it: until the topic's end has stood still this long with every group at it (a benchmark waiting for a
   * backlog to drain). Without it: until every group has reached the end the topic had when the wait began (the
   * topic may go on growing meanwhile, as it does on a broker other test files share).
   */
  readonly stableMs?: number;
}

/**
 * Waits until each consumer group has committed its offsets up to the end of `topic`; resolves with the time it
 * waited. A group that reads a topic from its beginning first works through whatever the broker already holds: on a
 * broker that other runtimes have filled, a message published now waits behind all of that.
 */
export async function waitForConsumerGroups(kafka: Kafka, options: ConsumerGroupsAtEnd): Promise<number> {
  const { topic, groupIds, timeoutMs, stableMs } = options;
  if (groupIds.length === 0) return 0;
  const admin = kafka.admin();
  await admin.connect();
  const started = Date.now();
  try {
    const endAtStart = stableMs === undefined ? await admin.fetchTopicOffsets(topic) : null;
    let stableSince: number | null = null;
    let lastEnd = '';
    for (;;) {
      const ends = endAtStart ?? (await admin.fetchTopicOffsets(topic));
      const endKey = ends.map((partition) => `${partition.partition}:${partition.high}`).join(',');
      const lagging: string[] = [];
      for (const groupId of groupIds) {
        const committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions ?? [];
        const behind = ends.reduce((sum, partition) => {
          const at = committed.find((entry) => entry.partition === partition.partition)?.offset ?? '-1';
          return sum + Math.max(0, Number(partition.high) - Math.max(Number(at), Number(partition.low)));
        }, 0);
        if (behind > 0) lagging.push(`${groupId} ${behind}`);
      }
      if (lagging.length === 0) {
        if (stableMs === undefined) return Date.now() - started;
        if (endKey === lastEnd) {
          stableSince ??= Date.now();
          if (Date.now() - stableSince >= stableMs) return Date.now() - started;
        } else stableSince = null;
      } else stableSince = null;
      lastEnd = endKey;
      if (Date.now() - started > timeoutMs)
        throw new Error(`still behind on ${topic} after ${timeoutMs} ms (messages): ${lagging.join(', ')}`);
      await sleep(250);
    }
  } finally {
    await admin.disconnect();
  }
}
