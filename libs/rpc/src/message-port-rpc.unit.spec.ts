import { MessageChannel } from 'node:worker_threads';
import { ApiError } from '@switchyard/api';
import { currentContext, runWithContext } from '@switchyard/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessRpc } from './in-process-rpc';
import { MessagePortRpc } from './message-port-rpc';
import type { RpcCall, RpcHandlers } from './rpc';

const opened: MessagePortRpc[] = [];
const pair = (main: InProcessRpc, handlers: RpcHandlers) => {
  const channel = new MessageChannel();
  const service = new InProcessRpc(() => undefined);
  service.register(handlers);
  const toService = new MessagePortRpc(channel.port1, main);
  const toMain = new MessagePortRpc(channel.port2, service);
  opened.push(toService, toMain);
  return { toService, toMain, channel };
};

afterEach(async () => {
  for (const rpc of opened.splice(0)) await rpc.close();
});

describe('MessagePortRpc', () => {
  it('serves a call on the other side as the in-process transport does: caller, actor, JSON in and out', async () => {
    const seen: { payload: unknown; call: RpcCall }[] = [];
    const { toService } = pair(new InProcessRpc(), {
      'vault.echo': async (payload, call) => {
        seen.push({ payload, call });
        return { at: new Date('2026-11-29T12:00:00.000Z'), missing: undefined, list: [1, undefined] };
      },
    });

    const answer = await toService.call(
      'vault.echo',
      { card: 'x', skip: undefined },
      { actor: { type: 'api-key-pair', id: 'k1' } },
    );

    expect(answer).toEqual({ at: '2026-11-29T12:00:00.000Z', list: [1, null] });
    expect(seen).toEqual([
      { payload: { card: 'x' }, call: { caller: 'embedded', actor: { type: 'api-key-pair', id: 'k1' } } },
    ]);
  });

  it("serves it in the caller's request context (request, correlation and causation ids), as TCP carries it", async () => {
    const { toService } = pair(new InProcessRpc(), {
      'vault.context': async () => {
        const { requestId, correlationId, causationId } = currentContext();
        return { requestId, correlationId, causationId };
      },
    });
    const context = {
      requestId: '7f0c3a52-52d4-4e8e-9d59-3c4f1b9a2e11',
      correlationId: '0b9f5e1c-8a3d-4c2e-b6f7-1d2e3f4a5b6c',
      causationId: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
    };

    expect(await runWithContext(context, () => toService.call('vault.context', {}))).toEqual(context);
  });

  it("passes a handler's ApiError back whole, and answers a pattern nobody serves with a 502", async () => {
    const { toService } = pair(new InProcessRpc(), {
      'vault.refuse': async () => {
        throw ApiError.notFound('no such card');
      },
    });

    await expect(toService.call('vault.refuse', {})).rejects.toMatchObject({ status: 404, message: 'no such card' });
    await expect(toService.call('vault.nobody', {})).rejects.toMatchObject({ status: 502 });
  });

  it("asks the main thread's in-process RPC back, while it serves", async () => {
    const main = new InProcessRpc();
    main.register({
      'identity.merchant-accounts.get': async (payload) => ({ id: (payload as { id: string }).id, name: 'Default' }),
    });
    const { toService, toMain } = pair(main, {
      'vault.needs-account': async () => toMain.call('identity.merchant-accounts.get', { id: 'default' }),
    });

    expect(await toService.call('vault.needs-account', {})).toEqual({ id: 'default', name: 'Default' });
  });

  it('fails the calls under way with a 502 once the other side is gone, and every call after', async () => {
    let release: () => void = () => undefined;
    const { toService } = pair(new InProcessRpc(), {
      'vault.slow': () => new Promise((resolve) => (release = () => resolve('late'))),
    });

    const underWay = toService.call('vault.slow', {});
    await new Promise((resolve) => setImmediate(resolve));
    await toService.close();

    await expect(underWay).rejects.toMatchObject({ status: 502 });
    await expect(toService.call('vault.slow', {})).rejects.toMatchObject({ status: 502 });
    release();
  });

  it('routes the forwarded patterns of an InProcessRpc to the other thread, the rest to its own handlers', async () => {
    const main = new InProcessRpc();
    main.register({ 'transactions.get': async () => 'here' });
    const { toService } = pair(main, { 'vault.ping': async () => 'there' });
    main.forward(['vault.ping'], toService);

    expect(await main.call('vault.ping', {})).toBe('there');
    expect(await main.call('transactions.get', {})).toBe('here');
  });
});
