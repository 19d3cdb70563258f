/** `reconciliation_id`: the UUID's 128 bits in base62, 22 characters, the same as the BigInt arithmetic gives. */
import { randomUUID } from 'node:crypto';
import { reconciliationId } from './transaction-wire';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The definition: the UUID as one 128-bit integer, written in base62, padded to 22 digits. */
function byBigInt(uuid: string): string {
  let value = BigInt(`0x${uuid.replace(/-/g, '')}`);
  let out = '';
  while (value > 0n) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out.padStart(22, '0');
}

describe('reconciliationId', () => {
  it('is the base62 form of the 128 bits, at the edges', () => {
    expect(reconciliationId('00000000-0000-0000-0000-000000000000')).toBe('0'.repeat(22));
    expect(reconciliationId('00000000-0000-0000-0000-00000000003e')).toBe(`${'0'.repeat(20)}10`);
    expect(reconciliationId('ffffffff-ffff-ffff-ffff-ffffffffffff')).toBe(
      byBigInt('ffffffff-ffff-ffff-ffff-ffffffffffff'),
    );
    expect(reconciliationId('ffffffff-ffff-ffff-ffff-ffffffffffff')).toHaveLength(22);
  });

  it('matches the BigInt arithmetic for random UUIDs', () => {
    for (let i = 0; i < 2_000; i++) {
      const uuid = randomUUID();
      expect(reconciliationId(uuid)).toBe(byBigInt(uuid));
    }
  });
});
