/** A stand-in for the services behind the gateway, for gateway HTTP specs. */
import { apiKeyPairPatterns, identityPatterns } from '@switchyard/contracts';
import type { KeyRecord } from '@switchyard/auth';
import type { RpcActor, RpcCallOptions, RpcClient } from '@switchyard/rpc';

/** Answers the key lookups of the auth guard, records every other call, and answers it as told (else a stub). */
export class FakeRpc implements RpcClient {
  readonly calls: { pattern: string; payload: unknown; actor: RpcActor | null }[] = [];
  private readonly answers = new Map<string, (payload: unknown) => unknown>();

  constructor(private readonly keys: readonly KeyRecord[]) {}

  answer(pattern: string, answer: ((payload: unknown) => unknown) | undefined): void {
    if (answer) this.answers.set(pattern, answer);
    else this.answers.delete(pattern);
  }

  reset(): void {
    this.calls.length = 0;
  }

  payloadsTo(pattern: string): unknown[] {
    return this.calls.filter((call) => call.pattern === pattern).map((call) => call.payload);
  }

  /** The payload and the actor (beside the payload) of each call to the pattern. */
  callsTo(pattern: string): { payload: unknown; actor: RpcActor | null }[] {
    return this.calls.filter((call) => call.pattern === pattern).map(({ payload, actor }) => ({ payload, actor }));
  }

  /** The payload and the actor of the one call made to the pattern. */
  onlyCallTo(pattern: string): { payload: unknown; actor: RpcActor | null } {
    const calls = this.callsTo(pattern);
    expect(calls).toHaveLength(1);
    return calls[0]!;
  }

  /** The payload of the one call made to the pattern. */
  onlyPayloadTo(pattern: string): unknown {
    const payloads = this.payloadsTo(pattern);
    expect(payloads).toHaveLength(1);
    return payloads[0];
  }

  async call<T>(pattern: string, payload: unknown, options: RpcCallOptions = {}): Promise<T> {
    if (pattern === identityPatterns.findKeyByKid)
      return (this.keys.find((key) => key.kid === (payload as { kid: string }).kid) ?? null) as T;
    if (pattern === apiKeyPairPatterns.recordUse) return undefined as T;
    this.calls.push({ pattern, payload, actor: options.actor ?? null });
    const answer = this.answers.get(pattern);
    return (answer ? await answer(payload) : { type: 'stub', pattern }) as T;
  }

  async close(): Promise<void> {}
}
