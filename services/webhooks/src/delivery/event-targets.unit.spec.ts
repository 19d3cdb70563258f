import { ApiError } from '@switchyard/api';
import type { RpcClient } from '@switchyard/rpc';
import { renderTarget, resourceOf, TargetMemory } from './event-targets';

const tx = 'b2b7c0de-0000-4000-8000-000000000001';

describe('resourceOf', () => {
  it('finds the transaction, capture, refund or API key pair of a name', () => {
    const stream = { stream_id: `transaction-${tx}` };
    expect(resourceOf({ ...stream, data: {} }, 'transaction.voided', 'acme')).toEqual({
      type: 'transaction',
      id: tx,
      pattern: 'transactions.get',
      payload: { merchant_account_id: 'acme', transaction_id: tx },
    });
    expect(resourceOf({ ...stream, data: { captureId: 'c-1' } }, 'capture.failed', 'acme')).toMatchObject({
      type: 'transaction-capture',
      id: 'c-1',
      payload: { merchant_account_id: 'acme', transaction_id: tx, capture_id: 'c-1' },
    });
    // An `intent: capture` authorization is also its direct capture.
    expect(resourceOf({ ...stream, data: { directCaptureId: tx } }, 'capture.succeeded', 'acme')).toMatchObject({
      type: 'transaction-capture',
      id: tx,
    });
    expect(resourceOf({ ...stream, data: { refundId: 'r-1' } }, 'refund.succeeded', 'acme')).toEqual({
      type: 'refund',
      id: 'r-1',
      pattern: 'transactions.refunds.by-id',
      payload: { merchant_account_id: 'acme', refund_id: 'r-1' },
    });
    expect(resourceOf({ stream_id: 'api-key-pair-k-1', data: { id: 'k-1' } }, 'api-key-pair.updated', null)).toEqual({
      type: 'api-key-pair',
      id: 'k-1',
      pattern: 'identity.api-key-pairs.get',
      payload: { id: 'k-1' },
    });
  });

  it('cannot tell without the ids or the merchant account, nor for unknown names', () => {
    expect(resourceOf({ stream_id: `transaction-${tx}`, data: {} }, 'capture.failed', 'acme')).toBeNull();
    expect(resourceOf({ stream_id: `transaction-${tx}`, data: {} }, 'refund.failed', 'acme')).toBeNull();
    expect(resourceOf({ stream_id: `transaction-${tx}`, data: {} }, 'transaction.voided', null)).toBeNull();
    expect(resourceOf({ stream_id: `transaction-${tx}`, data: {} }, 'payout.sent', 'acme')).toBeNull();
    expect(resourceOf({ stream_id: 'other-1', data: {} }, 'transaction.voided', 'acme')).toBeNull();
  });
});

describe('renderTarget', () => {
  const ref = { type: 'transaction', id: tx, pattern: 'transactions.get', payload: {} };
  const rpcAnswering = (...answers: Array<unknown | ApiError>): RpcClient & { calls: number } => {
    const client = {
      calls: 0,
      async call<T>(): Promise<T> {
        const answer = answers[Math.min(client.calls, answers.length - 1)];
        client.calls += 1;
        if (answer instanceof ApiError) throw answer;
        return answer as T;
      },
      async close() {},
    };
    return client;
  };

  it('waits for the owning read model to catch up with the event, then takes what it has', async () => {
    const stale = { type: 'transaction', id: tx, updated_at: '2026-01-01T00:00:00.000Z' };
    const fresh = { ...stale, updated_at: '2026-01-01T00:00:05.000Z' };
    const event = { name: 'transaction.voided', occurredAt: '2026-01-01T00:00:05.000Z' };
    const catchingUp = rpcAnswering(ApiError.notFound(), stale, fresh);
    expect(await renderTarget(catchingUp, ref, event, { catchUpDelaysMs: [1, 1, 1] })).toEqual(fresh);
    expect(catchingUp.calls).toBe(3);
    const neverFresh = rpcAnswering(stale);
    expect(await renderTarget(neverFresh, ref, event, { catchUpDelaysMs: [1, 1] })).toEqual(stale);
    expect(neverFresh.calls).toBe(3);
  });

  it('renders a resource that is gone as {type, id}, without waiting for a deletion', async () => {
    const gone = rpcAnswering(ApiError.notFound());
    expect(
      await renderTarget(
        gone,
        { ...ref, type: 'api-key-pair' },
        { name: 'api-key-pair.deleted', occurredAt: '2026-01-01T00:00:00Z' },
        { catchUpDelaysMs: [1, 1] },
      ),
    ).toEqual({
      type: 'api-key-pair',
      id: tx,
    });
    expect(gone.calls).toBe(1);
  });

  it('rejects on other failures, so that the bus message is not acknowledged', async () => {
    const down = rpcAnswering(ApiError.badGateway(new Error('down')));
    await expect(
      renderTarget(down, ref, { name: 'transaction.voided', occurredAt: '2026-01-01T00:00:00Z' }),
    ).rejects.toMatchObject({ status: 502 });
  });
});

describe('TargetMemory', () => {
  it('keeps the 10,000 newest keys per set by default, the oldest forgotten first', () => {
    const memory = new TargetMemory();
    for (let i = 0; i <= 10_000; i++) {
      memory.markSeen(`seen-${i}`);
      memory.markGone(`gone-${i}`);
    }
    expect(memory.size).toEqual({ seen: 10_000, gone: 10_000 });
    expect(memory.wasSeen('seen-0')).toBe(false);
    expect(memory.isGone('gone-0')).toBe(false);
    expect(memory.wasSeen('seen-1')).toBe(true);
    expect(memory.wasSeen('seen-10000')).toBe(true);
    expect(memory.isGone('gone-10000')).toBe(true);
  });

  it('makes a key remembered again the newest', () => {
    const memory = new TargetMemory(2);
    memory.markSeen('a');
    memory.markSeen('b');
    memory.markSeen('a');
    memory.markSeen('c');
    expect([memory.wasSeen('a'), memory.wasSeen('b'), memory.wasSeen('c')]).toEqual([true, false, true]);
  });

  it('renders a forgotten resource the same, after the catch-up wait a never-seen one gets', async () => {
    const ref = { type: 'transaction', id: tx, pattern: 'transactions.get', payload: {} };
    const event = { name: 'transaction.voided', occurredAt: '2026-01-01T00:00:00Z' };
    let calls = 0;
    const gone: RpcClient = {
      async call<T>(): Promise<T> {
        calls += 1;
        throw ApiError.notFound();
      },
      async close() {},
    };
    const memory = new TargetMemory(1);
    memory.markSeen(`${ref.pattern}\u0000${tx}`);
    expect(await renderTarget(gone, ref, event, { catchUpDelaysMs: [1, 1] }, memory)).toEqual({
      type: 'transaction',
      id: tx,
    });
    expect(calls).toBe(1);

    memory.markSeen('another resource');
    memory.markGone('another resource');
    calls = 0;
    expect(await renderTarget(gone, ref, event, { catchUpDelaysMs: [1, 1] }, memory)).toEqual({
      type: 'transaction',
      id: tx,
    });
    expect(calls).toBe(3);
  });
});
