import { RandomPool, randomBytes } from './random-pool';

/** A fill that counts its calls and writes a known sequence, so which bytes went where can be checked. */
function countingFill() {
  const fills: Buffer[] = [];
  let next = 1;
  const fill = (buffer: Buffer) => {
    fills.push(buffer);
    for (let i = 0; i < buffer.length; i++) buffer[i] = next++ % 256 || 1;
  };
  return { fills, fill };
}

describe('RandomPool', () => {
  it('fills once per pool of bytes handed out, each byte once, in buffers of their own', () => {
    const { fills, fill } = countingFill();
    const pool = new RandomPool({ size: 64, fill });
    const drawn = Array.from({ length: 8 }, () => pool.bytes(16));
    // 8 × 16 bytes from a pool of 64: two fills, not eight calls.
    expect(fills).toHaveLength(2);
    expect(drawn.map((bytes) => bytes.length)).toEqual(Array(8).fill(16));
    const all = Buffer.concat(drawn);
    expect(new Set(all).size).toBe(128);
    // A buffer handed out is a copy: the next fill does not change it.
    const first = Buffer.from(drawn[0]!);
    pool.bytes(64);
    expect(drawn[0]).toEqual(first);
  });

  it('zeroes what it handed out, so the pool never holds a key or IV in use', () => {
    const { fills, fill } = countingFill();
    const pool = new RandomPool({ size: 64, fill });
    pool.bytes(12);
    pool.bytes(32);
    const buffer = fills[0]!;
    expect(buffer.subarray(0, 44).every((byte) => byte === 0)).toBe(true);
    expect(buffer.subarray(44).every((byte) => byte !== 0)).toBe(true);
  });

  it('refills when what is left is too short, and fills a request larger than the pool on its own', () => {
    const { fills, fill } = countingFill();
    const pool = new RandomPool({ size: 64, fill });
    pool.bytes(40);
    pool.bytes(40);
    expect(fills).toHaveLength(2);
    const large = pool.bytes(100);
    expect(large).toHaveLength(100);
    expect(fills).toHaveLength(3);
    expect(fills[2]).toBe(large);
    expect(pool.bytes(0)).toHaveLength(0);
    expect(() => pool.bytes(-1)).toThrow(RangeError);
    expect(() => pool.bytes(1.5)).toThrow(RangeError);
  });

  it('hands out the crypto source’s bytes by default', () => {
    const keys = Array.from({ length: 300 }, () => randomBytes(32).toString('hex'));
    expect(new Set(keys).size).toBe(300);
    expect(keys.every((key) => key.length === 64 && key !== '0'.repeat(64))).toBe(true);
  });
});
