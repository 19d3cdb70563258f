/**
 * The in-process transport clones payloads and replies through JSON, as a wire would, except a reply its handler
 * marked `builtForTheCall` (a read's views, parsed for it alone): that one is handed over as it is.
 */
import { InProcessRpc } from './in-process-rpc';
import { builtForTheCall } from './rpc';

describe('InProcessRpc', () => {
  it('clones a reply through JSON: the caller never holds the handler’s objects, and gets what a wire would carry', async () => {
    const held = { items: [{ id: 'a', at: new Date('2026-01-02T03:04:05Z') }] };
    const rpc = new InProcessRpc();
    rpc.register({ 'things.get': async () => held });
    const reply = await rpc.call<{ items: { id: string; at: unknown }[] }>('things.get', {});
    expect(reply).not.toBe(held);
    expect(reply.items[0]).toEqual({ id: 'a', at: '2026-01-02T03:04:05.000Z' });
  });

  it('hands over a reply built for the call as it is, and still clones the payload', async () => {
    const built = builtForTheCall({ items: [{ id: 'a' }] });
    const sent = { filter: { id: 'a' } };
    let received: unknown;
    const rpc = new InProcessRpc();
    rpc.register({
      'things.list': async (payload) => {
        received = payload;
        return built;
      },
    });
    expect(await rpc.call('things.list', sent)).toBe(built);
    expect(received).toEqual(sent);
    expect(received).not.toBe(sent);
  });

  it('an error reply is the handler’s error, marked or not', async () => {
    const rpc = new InProcessRpc(() => undefined);
    rpc.register({
      'things.fail': async () => {
        throw new Error('boom');
      },
    });
    await expect(rpc.call('things.fail', {})).rejects.toMatchObject({ status: 500 });
  });
});
