/**
 * `last_used_at` without a write per request: the gateway remembers the latest use of each key in memory and
 * sends them to identity in one batch per interval (default 60 s, so the field lags by at most about a minute;
 * the spec allows a few). A batch that fails is kept for the next one.
 */
import { apiKeyPairPatterns } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';

export class KeyUsageRecorder {
  private pending = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly rpc: RpcClient,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void = () => undefined,
    private readonly now: () => Date = () => new Date(),
  ) {}

  record(apiKeyPairId: string): void {
    this.pending.set(apiKeyPairId, this.now().toISOString());
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.rpc.call(apiKeyPairPatterns.recordUse, { uses: [...batch].map(([id, at]) => ({ id, at })) });
    } catch (error) {
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.onError(error);
    }
  }
}
