/**
 * The streams (message keys) a consumer group has parked on one partition of a topic, and for each the range of its
 * entries in the dead-letter topic still to be replayed. It travels with the group's committed offset of that
 * partition (Kafka's offset commit metadata; the in-process broker keeps the same), so it is written in the same
 * step as the progress it explains and whoever consumes the partition next — after a restart or a rebalance —
 * reads it back with the offset.
 *
 * `first`: every entry of the stream in the dead-letter partition before this offset is done (handled by a replay,
 * discarded, or from an earlier parking); `last`: the newest entry. Entries are appended in order, so the pending
 * ones are those of the stream at offsets `first` … `last`.
 */

const PREFIX = 'switchyard.parked.v1:';

export interface ParkedStream {
  readonly first: number;
  readonly last: number;
}

export class ParkedStreams {
  static readonly none = new ParkedStreams(new Map());

  private constructor(private readonly streams: ReadonlyMap<string, ParkedStream>) {}

  /**
   * Reads what `encode` wrote. Anything else — no metadata, or metadata another tool left (`kafka-consumer-groups
   * --reset-offsets` writes an empty string) — means nothing is parked.
   */
  static decode(metadata: string | null | undefined): ParkedStreams {
    if (!metadata?.startsWith(PREFIX)) return ParkedStreams.none;
    try {
      const rows: unknown = JSON.parse(metadata.slice(PREFIX.length));
      if (!Array.isArray(rows)) return ParkedStreams.none;
      const streams = new Map<string, ParkedStream>();
      for (const row of rows) {
        if (
          !Array.isArray(row) ||
          typeof row[0] !== 'string' ||
          !Number.isSafeInteger(row[1]) ||
          !Number.isSafeInteger(row[2])
        )
          continue;
        streams.set(row[0], { first: row[1] as number, last: row[2] as number });
      }
      return streams.size === 0 ? ParkedStreams.none : new ParkedStreams(streams);
    } catch {
      return ParkedStreams.none;
    }
  }

  /** null when nothing is parked: the commit carries no metadata, as before dead-lettering existed. */
  encode(): string | null {
    if (this.streams.size === 0) return null;
    return PREFIX + JSON.stringify([...this.streams].map(([key, stream]) => [key, stream.first, stream.last]));
  }

  get size(): number {
    return this.streams.size;
  }

  has(key: string): boolean {
    return this.streams.has(key);
  }

  get(key: string): ParkedStream | undefined {
    return this.streams.get(key);
  }

  entries(): Array<[string, ParkedStream]> {
    return [...this.streams];
  }

  /** With the entry at `offset` of the dead-letter partition added to its stream (parking the stream if it was not). */
  withEntry(key: string, offset: number): ParkedStreams {
    const current = this.streams.get(key);
    return this.with(key, current ? { first: current.first, last: offset } : { first: offset, last: offset });
  }

  /**
   * Whether a replayed entry is the stream's oldest pending one: at or after `first`, with the stream's previous
   * entry (`previous`, -1 for none) before it. A replay copy that is not (already handled, or one behind an entry that
   * failed again) is skipped, so a stream's entries are handled once each and in order.
   */
  isNext(key: string, entry: number, previous: number): boolean {
    const stream = this.streams.get(key);
    return stream !== undefined && entry >= stream.first && entry <= stream.last && previous < stream.first;
  }

  /** With everything of the stream up to `entry` done; the stream released when nothing of it is left. */
  withDoneThrough(key: string, entry: number): ParkedStreams {
    const stream = this.streams.get(key);
    if (!stream) return this;
    if (entry >= stream.last) {
      const streams = new Map(this.streams);
      streams.delete(key);
      return streams.size === 0 ? ParkedStreams.none : new ParkedStreams(streams);
    }
    return this.with(key, { first: Math.max(stream.first, entry + 1), last: stream.last });
  }

  private with(key: string, stream: ParkedStream): ParkedStreams {
    const streams = new Map(this.streams);
    streams.set(key, stream);
    return new ParkedStreams(streams);
  }
}
