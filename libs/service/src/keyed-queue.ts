/**
 * Runs tasks one at a time per key, in arrival order, in this process. Commands on one stream (a transaction, a
 * buyer) queue here so a burst of concurrent requests does not turn into a storm of revision conflicts; across
 * processes the stream's expected revision still decides.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
