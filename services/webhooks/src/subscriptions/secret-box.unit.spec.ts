import { createCipheriv, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';
import { webhooksKeyId, webhooksKeyRing } from './webhooks-keys';

/** A value as releases before key ids sealed it (`v1.<iv>.<ciphertext>.<tag>`). */
function sealV1(key: Buffer, clear: string, owner: string[]): string {
  const derived = createSecretKey(
    Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'switchyard/webhooks/v1/secrets-at-rest', 32)),
  );
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derived, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(JSON.stringify(['webhooks/v1', ...owner])));
  const ciphertext = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
  return ['v1', iv, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

describe('SecretBox with a key ring', () => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
  const owner = ['secret', 'sub-1', 'sec-1'];

  it('seals under the active key, naming it, and opens what retired keys sealed, v1 values included', () => {
    const before = new SecretBox(oldKey);
    const sealedBefore = before.seal('whsec_old', owner);
    const legacy = sealV1(oldKey, 'whsec_legacy', owner);
    const box = new SecretBox(webhooksKeyRing(newKey, [oldKey]));
    const sealed = box.seal('whsec_new', owner);
    expect(sealed.startsWith(`v2.${webhooksKeyId(newKey)}.`)).toBe(true);
    expect([box.open(sealed, owner), box.open(sealedBefore, owner), box.open(legacy, owner)]).toEqual([
      'whsec_new',
      'whsec_old',
      'whsec_legacy',
    ]);
    expect([box.isCurrent(sealed), box.isCurrent(sealedBefore), box.keyIdOf(legacy)]).toEqual([true, false, null]);
    expect(() => box.open(sealed, ['secret', 'sub-2', 'sec-1'])).toThrow(/failed decryption/);
  });

  it('reads its ring again when a value names a key it lacks (the key file rotated meanwhile)', () => {
    let ring = webhooksKeyRing(oldKey);
    let reloads = 0;
    const running = new SecretBox(ring, { reload: () => ((reloads += 1), ring) });
    const rotated = new SecretBox(webhooksKeyRing(newKey, [oldKey])).seal('whsec_x', owner);
    ring = webhooksKeyRing(newKey, [oldKey]); // what the files hold now
    expect(running.open(rotated, owner)).toBe('whsec_x');
    expect(reloads).toBe(1);
    expect(running.activeKeyId).toBe(webhooksKeyId(newKey)); // and it seals under the new key from now on
    const unknown = new SecretBox(randomBytes(32)).seal('whsec_y', owner);
    expect(() => running.open(unknown, owner)).toThrow(/sealed under webhooks key [0-9a-f]{16}, which is neither/);
    expect(reloads).toBe(1); // not read again within a second
  });
});
