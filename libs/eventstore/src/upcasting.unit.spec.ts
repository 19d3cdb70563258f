/** The schema-version registry: stamping appends, upcasting reads step by step, refusing versions from the future. */
import type { RecordedEvent } from './event-store';
import { EventUpcasters, schemaVersionOf } from './upcasting';

const recorded = (type: string, data: unknown, metadata: Record<string, unknown> = {}): RecordedEvent => ({
  id: 'e1',
  streamId: 's-1',
  type,
  data,
  metadata,
  revision: 0,
  position: '1',
  recordedAt: '2026-01-01T00:00:00.000Z',
});

const upcasters = () =>
  new EventUpcasters()
    .register('Renamed', 1, (data) => {
      const { old, ...rest } = data as { old: string };
      return { ...rest, current: old };
    })
    .register('Renamed', 2, (data) => ({ ...(data as object), added: true }));

it('reads an event without a version as version 1', () => {
  expect(schemaVersionOf(recorded('A', {}))).toBe(1);
  expect(schemaVersionOf(recorded('A', {}, { schemaVersion: 3 }))).toBe(3);
  expect(schemaVersionOf(recorded('A', {}, { schemaVersion: 'x' }))).toBe(1);
});

it('knows each type at 1 + its upcasters, and stamps appends with it', () => {
  const registry = upcasters();
  expect(registry.currentVersion('Renamed')).toBe(3);
  expect(registry.currentVersion('Other')).toBe(1);
  expect(registry.stamp({ type: 'Renamed', data: {}, metadata: { actor: 'a' } })).toEqual({
    type: 'Renamed',
    data: {},
    metadata: { actor: 'a', schemaVersion: 3 },
  });
  expect(registry.stamp({ type: 'Other', data: {} }).metadata).toEqual({ schemaVersion: 1 });
});

it('upcasts version 1 through every step, version 2 through the last, and leaves the current one as it is', () => {
  const registry = upcasters();
  expect(registry.upcast(recorded('Renamed', { old: 'x', keep: 1 }))).toMatchObject({
    data: { current: 'x', keep: 1, added: true },
    metadata: { schemaVersion: 3 },
  });
  expect(registry.upcast(recorded('Renamed', { current: 'y' }, { schemaVersion: 2 })).data).toEqual({
    current: 'y',
    added: true,
  });
  const current = recorded('Renamed', { current: 'z', added: true }, { schemaVersion: 3 });
  expect(registry.upcast(current)).toBe(current);
  const other = recorded('Other', { a: 1 });
  expect(registry.upcast(other)).toBe(other);
});

it('refuses an event written by a newer release, and upcasters registered out of order', () => {
  expect(() => upcasters().upcast(recorded('Renamed', {}, { schemaVersion: 4 }))).toThrow(
    /newer than this build knows/,
  );
  expect(() => new EventUpcasters().register('A', 2, (data) => data)).toThrow(/must be registered next/);
});
