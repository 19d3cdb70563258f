import { ServerTCP } from '@nestjs/microservices';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StringPatternServerTcp } from './tcp-rpc';

/** Nest's own route of a pattern (protected on its server). */
const nestRouteOf = (pattern: string) =>
  (new ServerTCP({}) as unknown as { getRouteFromPattern(pattern: string): string }).getRouteFromPattern(pattern);

describe('StringPatternServerTcp', () => {
  afterEach(() => vi.restoreAllMocks());

  it('routes a plain string pattern as it is, without trying it as JSON (a thrown SyntaxError per call)', () => {
    const parse = vi.spyOn(JSON, 'parse');
    expect(new StringPatternServerTcp({}).getRouteFromPattern('vault.cards.hand-over')).toBe('vault.cards.hand-over');
    expect(parse).not.toHaveBeenCalled();
  });

  it.each(['{"cmd":"sum","role":"math"}', '["a",1]', '"quoted"', '42', 'vault.forward'])(
    'routes %s as Nest does',
    (pattern) => {
      expect(new StringPatternServerTcp({}).getRouteFromPattern(pattern)).toBe(nestRouteOf(pattern));
    },
  );
});
