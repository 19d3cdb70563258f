/** The card vault over a real SQLite file: round trip, account scoping, no clear PAN on disk, tamper detection, keys. */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import Database from 'better-sqlite3';
import { loadSettings } from '@switchyard/config';
import { CardVault, loadVaultKey } from './card-vault';
import { keyRing, VaultKeys } from './vault-keys';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let dbFile: string;
let db: Database.Database;
let vault: CardVault;
let key: Buffer;
let clock = Date.parse('2026-01-01T00:00:00.000Z');
let ids = 0;

const newId = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`;
/** Over the test's database; `legacyRootWhen` so that the root is the key itself, as for an installation from before envelope encryption. */
const openVault = (withKey: Buffer, retired: Buffer[] = [], on = db) =>
  new CardVault(on, {
    keys: new VaultKeys(on, keyRing(withKey, retired), { legacyRootWhen: () => true }),
    now: () => new Date((clock += 1000)),
    newId,
  });

/** A Luhn-valid number from its first digits (the check digit appended). */
function withCheckDigit(body: string): string {
  for (let check = 0; check <= 9; check++) {
    const digits = `${body}${check}`;
    let total = 0;
    for (let i = 0; i < digits.length; i++) {
      let digit = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      total += digit;
    }
    if (total % 10 === 0) return digits;
  }
  throw new Error('unreachable');
}

// Middle digits (345678) that appear in neither the BIN nor the last 4, so they can be searched for on disk.
const pan = withCheckDigit('492912345678901');

beforeEach(() => {
  dir = createTestDataDir('card-vault');
  dbFile = path.join(dir, 'transactions.db');
  db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  key = loadVaultKey({});
  vault = openVault(key);
});
afterEach(() => {
  if (db.open) db.close();
  removeTestDataDir(dir);
});

it('stores a card and finds and reveals it in the same merchant account', () => {
  const stored = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
  expect(stored).toEqual({
    id: '00000000-0000-4000-8000-000000000001',
    merchantAccountId: 'shop-a',
    scheme: 'visa',
    cardType: null,
    bin: '492912',
    last4: pan.slice(-4),
    expirationDate: '12/30',
    fingerprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
  });
  expect(JSON.stringify(stored)).not.toContain(pan);
  expect(vault.find('shop-a', stored.id)).toEqual(stored);
  expect(vault.reveal('shop-a', stored.id)).toEqual({ number: pan, expirationDate: '12/30' });

  const again = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
  expect(again.id).not.toBe(stored.id);
  expect(vault.find('shop-a', 'missing')).toBeNull();
  expect(vault.reveal('shop-a', 'missing')).toBeNull();
});

it('keeps cards of one merchant account from another', () => {
  const stored = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
  expect(vault.find('shop-b', stored.id)).toBeNull();
  expect(vault.reveal('shop-b', stored.id)).toBeNull();
});

it('keeps only the columns it should: no security code, no clear number', () => {
  const columns = (db.prepare('PRAGMA table_info(vault_cards)').all() as { name: string }[])
    .map((column) => column.name)
    .sort();
  expect(columns).toEqual(
    [
      'bin',
      'buyer_id',
      'created_at',
      'data_key_id',
      'expiration_date',
      'fingerprint',
      'id',
      'last4',
      'merchant_account_id',
      'pan_ciphertext',
      'pan_iv',
      'pan_tag',
      'scheme',
    ].sort(),
  );
  const indexes = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'vault_cards'")
    .all() as { sql: string | null }[];
  expect(indexes.map((index) => index.sql)).toContainEqual(
    expect.stringContaining('(merchant_account_id, fingerprint)'),
  );
});

it('never writes the card number to the SQLite file or its WAL', () => {
  const numbers = [pan, withCheckDigit('555555987654321'), '378282246310005'];
  const stored = numbers.map((number) => vault.store('shop-a', { number, expirationDate: '01/29' }));
  expect(stored.map((card) => vault.reveal('shop-a', card.id)?.number)).toEqual(numbers);

  const onDisk = () =>
    ['', '-wal', '-journal']
      .map((suffix) => `${dbFile}${suffix}`)
      .filter((file) => fs.existsSync(file))
      .map((file) => fs.readFileSync(file));
  const check = (files: Buffer[]) => {
    for (const bytes of files) {
      for (const number of numbers) {
        expect(bytes.includes(Buffer.from(number, 'latin1'))).toBe(false);
        expect(bytes.includes(Buffer.from(number, 'utf16le'))).toBe(false);
        expect(bytes.includes(Buffer.from(number.slice(6, -4), 'latin1'))).toBe(false);
      }
    }
  };
  const whileOpen = onDisk();
  expect(whileOpen.length).toBeGreaterThan(1); // the WAL holds the rows before the checkpoint
  expect(Buffer.concat(whileOpen).includes(Buffer.from('492912', 'latin1'))).toBe(true); // we do look at the rows
  check(whileOpen);
  db.close(); // checkpoints the WAL into the main file
  check(onDisk());
});

it('refuses a ciphertext that was altered, moved to another row, or read under another key', () => {
  const first = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
  const second = vault.store('shop-a', { number: '4111111111111111', expirationDate: '11/31' });
  const row = db.prepare('SELECT pan_ciphertext FROM vault_cards WHERE id = ?').get(first.id) as {
    pan_ciphertext: Buffer;
  };
  const altered = Buffer.from(row.pan_ciphertext);
  altered[3] = altered[3]! ^ 0x01;
  db.prepare('UPDATE vault_cards SET pan_ciphertext = ? WHERE id = ?').run(altered, first.id);
  expect(() => vault.reveal('shop-a', first.id)).toThrow(/failed decryption/);
  try {
    vault.reveal('shop-a', first.id);
  } catch (error) {
    expect(String((error as Error).message)).not.toContain(pan);
  }

  db.prepare('UPDATE vault_cards SET pan_tag = zeroblob(16) WHERE id = ?').run(second.id);
  expect(() => vault.reveal('shop-a', second.id)).toThrow(/failed decryption/);

  const third = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
  const fourth = vault.store('shop-b', { number: '5555555555554444', expirationDate: '12/30' });
  db.prepare(
    `UPDATE vault_cards SET (pan_ciphertext, pan_iv, pan_tag) = (SELECT pan_ciphertext, pan_iv, pan_tag FROM vault_cards WHERE id = @from) WHERE id = @to`,
  ).run({ from: third.id, to: fourth.id });
  expect(() => vault.reveal('shop-b', fourth.id)).toThrow(/failed decryption/);
  expect(vault.reveal('shop-a', third.id)?.number).toBe(pan);

  // Another key-encryption key cannot even unwrap the vault's root.
  expect(() => openVault(loadVaultKey({}))).toThrow(/neither VAULT_KEY nor a retired key/);
});

it('fingerprints the same card alike within an account and differently across accounts and keys', () => {
  const a1 = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
  const a2 = vault.store('shop-a', { number: pan, expirationDate: '01/31' });
  const b1 = vault.store('shop-b', { number: pan, expirationDate: '12/30' });
  const other = vault.store('shop-a', { number: '4111111111111111', expirationDate: '12/30' });
  expect(a2.fingerprint).toBe(a1.fingerprint);
  expect(b1.fingerprint).not.toBe(a1.fingerprint);
  expect(other.fingerprint).not.toBe(a1.fingerprint);
  expect(openVault(key).store('shop-a', { number: pan, expirationDate: '12/30' }).fingerprint).toBe(a1.fingerprint);
  const elsewhere = new Database(':memory:');
  expect(
    openVault(loadVaultKey({}), [], elsewhere).store('shop-a', { number: pan, expirationDate: '12/30' }).fingerprint,
  ).not.toBe(a1.fingerprint);
  elsewhere.close();
});

it.each([
  ['4111111111111111', 'visa'],
  ['5555555555554444', 'mastercard'],
  ['2223003122003222', 'mastercard'],
  ['378282246310005', 'amex'],
  ['6011111111111117', 'discover'],
  ['3530111333300000', 'jcb'],
  ['36227206271667', 'diners-club'],
  ['1234567812345670', null],
])('detects the scheme of %s as %s', (number, scheme) => {
  const stored = vault.store('shop-a', { number, expirationDate: '12/30' });
  expect(stored.scheme).toBe(scheme);
  expect(stored.bin).toBe(number.slice(0, 6));
  expect(stored.last4).toBe(number.slice(-4));
});

it('rejects malformed cards with a RangeError that does not repeat the number', () => {
  const cases: [string, string, RegExp][] = [
    ['4111111111111112', '12/30', /Luhn/],
    ['4111 1111 1111 1111', '12/30', /12 to 19 digits/],
    ['41111111111', '12/30', /12 to 19 digits/],
    ['4111111111111111', '13/30', /MM\/YY/],
    ['4111111111111111', '12/2030', /MM\/YY/],
  ];
  for (const [number, expirationDate, message] of cases) {
    let thrown: unknown;
    try {
      vault.store('shop-a', { number, expirationDate });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RangeError);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).not.toContain(number.replace(/ /g, '').slice(0, 11));
  }
  expect(db.prepare('SELECT count(*) AS n FROM vault_cards').get()).toEqual({ n: 0 });
  expect(() => keyRing(Buffer.alloc(16))).toThrow(RangeError);
});

it('does not show its keys when inspected', () => {
  expect(inspect(vault, { showHidden: true, depth: 5 })).not.toContain(key.toString('hex').slice(0, 16));
  expect(Object.keys(vault)).toEqual([]);
});

describe('loadVaultKey', () => {
  it('creates <dataDir>/vault.key with mode 0600 once and reuses it', () => {
    const dataDir = path.join(dir, 'data');
    const created = loadVaultKey({ dataDir });
    const file = path.join(dataDir, 'vault.key');
    expect(created).toHaveLength(32);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64').equals(created)).toBe(true);
    expect(loadVaultKey({ dataDir }).equals(created)).toBe(true);
    expect(fs.readdirSync(dataDir)).toEqual(['vault.key']); // no temporary file left behind
  });

  it('keeps an existing key file and refuses a corrupt one without replacing it', () => {
    const existing = Buffer.alloc(32, 7);
    fs.writeFileSync(path.join(dir, 'vault.key'), `${existing.toString('base64')}\n`, { mode: 0o600 });
    expect(loadVaultKey({ dataDir: dir }).equals(existing)).toBe(true);

    fs.writeFileSync(path.join(dir, 'vault.key'), 'not a key');
    expect(() => loadVaultKey({ dataDir: dir })).toThrow(/vault\.key does not hold base64 of exactly 32 bytes/);
    expect(fs.readFileSync(path.join(dir, 'vault.key'), 'utf8')).toBe('not a key');
  });

  it('takes a configured key in base64 or base64url, before any key file', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => 250 - i));
    expect(loadVaultKey({ configured: bytes.toString('base64'), dataDir: dir }).equals(bytes)).toBe(true);
    expect(loadVaultKey({ configured: bytes.toString('base64url') }).equals(bytes)).toBe(true);
    expect(fs.existsSync(path.join(dir, 'vault.key'))).toBe(false);
  });

  it('rejects a malformed configured key without echoing it', () => {
    const tooShort = Buffer.alloc(31, 9).toString('base64');
    const tooLong = Buffer.alloc(33, 9).toString('base64');
    for (const configured of [tooShort, tooLong, 'secret-passphrase-not-base64!', '']) {
      let message = '';
      try {
        loadVaultKey({ configured });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/VAULT_KEY/);
      expect(message).toMatch(/32 bytes/);
      if (configured) expect(message).not.toContain(configured);
    }
  });
});

describe('VAULT_KEY setting', () => {
  const configured = Buffer.alloc(32, 42).toString('base64');

  it('is readable but left out of anything that prints the settings', () => {
    const settings = loadSettings({ VAULT_KEY: configured });
    expect(settings.VAULT_KEY).toBe(configured);
    expect(JSON.stringify(settings)).not.toContain(configured);
    expect(inspect(settings)).not.toContain(configured);
    expect(Object.keys(settings)).not.toContain('VAULT_KEY');
    expect(loadSettings({}).VAULT_KEY).toBeUndefined();
  });

  it('stops start-up on a malformed key, naming the variable but not the value', () => {
    const bad = 'my-very-secret-vault-passphrase';
    let message = '';
    try {
      loadSettings({ VAULT_KEY: bad });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^invalid configuration: VAULT_KEY: must be base64/);
    expect(message).not.toContain(bad);
  });
});

it('reads rows encrypted before the encryption moved to VaultCipher (the format is unchanged)', () => {
  // The format as first written, with node:crypto directly: HKDF label, AAD and column layout.
  const encryptionKey = Buffer.from(
    hkdfSync('sha256', key, Buffer.alloc(0), 'switchyard/card-vault/v1/pan-encryption', 32),
  );
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(JSON.stringify(['vault_cards/v1', 'legacy-row', 'shop-a']), 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(pan, 'utf8'), cipher.final()]);
  db.prepare(
    `INSERT INTO vault_cards (id, merchant_account_id, pan_ciphertext, pan_iv, pan_tag, bin, last4, expiration_date, scheme, fingerprint, created_at)
     VALUES ('legacy-row', 'shop-a', ?, ?, ?, '492912', ?, '12/30', 'visa', 'x', '2026-01-01T00:00:00.000Z')`,
  ).run(ciphertext, iv, cipher.getAuthTag(), pan.slice(-4));
  expect(vault.reveal('shop-a', 'legacy-row')).toEqual({ number: pan, expirationDate: '12/30' });

  // The CLI's `vault rewrap` moves it to a data key of its own; it reads the same, and no longer under the old recipe.
  expect(vault.legacyRowCount()).toBe(1);
  expect(vault.migrateLegacyRows()).toBe(1);
  expect(vault.migrateLegacyRows()).toBe(0);
  expect(vault.reveal('shop-a', 'legacy-row')).toEqual({ number: pan, expirationDate: '12/30' });
  const row = db
    .prepare('SELECT pan_ciphertext, pan_iv, pan_tag, data_key_id FROM vault_cards WHERE id = ?')
    .get('legacy-row') as { pan_ciphertext: Buffer; pan_iv: Buffer; pan_tag: Buffer; data_key_id: string };
  expect(row.data_key_id).toMatch(/^[0-9a-f-]{36}$/);
  const decipher = createDecipheriv('aes-256-gcm', encryptionKey, row.pan_iv, { authTagLength: 16 });
  decipher.setAAD(Buffer.from(JSON.stringify(['vault_cards/v1', 'legacy-row', 'shop-a']), 'utf8'));
  decipher.setAuthTag(row.pan_tag);
  expect(() => Buffer.concat([decipher.update(row.pan_ciphertext), decipher.final()])).toThrow();
});

describe('envelope encryption', () => {
  const dataKeys = () =>
    db.prepare('SELECT id, kek_id, purpose, owner FROM vault_data_keys ORDER BY created_at, id').all() as {
      id: string;
      kek_id: string;
      purpose: string;
      owner: string | null;
    }[];

  it("encrypts each card without a buyer under a data key of its own, and a buyer's cards under one key", () => {
    const a = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
    const b = vault.store('shop-a', { number: '4111111111111111', expirationDate: '12/30' });
    const c = vault.store('shop-a', { number: '5555555555554444', expirationDate: '12/30' }, { buyerId: 'buyer-1' });
    const d = vault.store('shop-a', { number: '378282246310005', expirationDate: '12/30' }, { buyerId: 'buyer-1' });
    const keyOf = (id: string) =>
      (db.prepare('SELECT data_key_id FROM vault_cards WHERE id = ?').get(id) as { data_key_id: string }).data_key_id;
    expect(new Set([keyOf(a.id), keyOf(b.id), keyOf(c.id)]).size).toBe(3);
    expect(keyOf(d.id)).toBe(keyOf(c.id));
    expect(
      dataKeys()
        .map((k) => k.purpose)
        .sort(),
    ).toEqual(['card-data', 'card-data', 'card-data', 'root']);
    // The wrapped keys are not the data keys: the table holds no 32-byte value that opens a row.
    expect(vault.reveal('shop-a', d.id)?.number).toBe('378282246310005');

    vault.remove('shop-a', a.id);
    expect(dataKeys()).toHaveLength(3); // its own key went with it
    vault.remove('shop-a', c.id);
    expect(dataKeys()).toHaveLength(3); // the buyer's key stays for their other card
    expect(vault.reveal('shop-a', d.id)?.number).toBe('378282246310005');
  });

  it('shreds a buyer: their key is gone, so a copy of their ciphertext taken before cannot be opened by anything left', () => {
    const kept = vault.store('shop-a', { number: '4111111111111111', expirationDate: '12/30' });
    const theirs = vault.store('shop-a', { number: pan, expirationDate: '12/30' }, { buyerId: 'buyer-9' });
    const copy = db.prepare('SELECT * FROM vault_cards WHERE id = ?').get(theirs.id) as Record<string, unknown>;
    expect(vault.shredBuyer('shop-a', 'buyer-9')).toBe(1);
    expect(vault.reveal('shop-a', theirs.id)).toBeNull();
    expect(vault.find('shop-a', theirs.id)).toBeNull();
    // Put the row back from the "backup": with its data key gone it does not open.
    db.prepare(
      `INSERT INTO vault_cards (${Object.keys(copy).join(', ')}) VALUES (${Object.keys(copy)
        .map((k) => `@${k}`)
        .join(', ')})`,
    ).run(copy);
    expect(vault.reveal('shop-a', theirs.id)).toBeNull();
    expect(vault.reveal('shop-a', kept.id)?.number).toBe('4111111111111111');
  });

  it('rotates the key-encryption key: re-wraps data keys only; fingerprints, rows and the root stay', () => {
    const before = vault.store('shop-a', { number: pan, expirationDate: '12/30' }, { buyerId: 'buyer-1' });
    const ciphertext = (
      db.prepare('SELECT pan_ciphertext FROM vault_cards WHERE id = ?').get(before.id) as { pan_ciphertext: Buffer }
    ).pan_ciphertext;
    const next = loadVaultKey({});
    const rotating = openVault(next, [key]);
    expect(rotating.reveal('shop-a', before.id)?.number).toBe(pan); // the old key still unwraps
    const during = rotating.store('shop-a', { number: '4111111111111111', expirationDate: '12/30' });
    const keys = new VaultKeys(db, keyRing(next, [key]));
    const kekOld = dataKeys().find((k) => k.purpose === 'root')!.kek_id;
    expect(new Set(dataKeys().map((k) => k.kek_id)).size).toBe(2);
    expect(keys.rewrap()).toEqual({
      rewrapped: 2,
      alreadyCurrent: 1,
      activeKeyId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(keys.rewrap().rewrapped).toBe(0);
    expect(dataKeys().every((k) => k.kek_id !== kekOld)).toBe(true);

    // The old key can go now.
    const after = openVault(next);
    expect(after.reveal('shop-a', before.id)?.number).toBe(pan);
    expect(after.reveal('shop-a', during.id)?.number).toBe('4111111111111111');
    expect(after.store('shop-a', { number: pan, expirationDate: '01/31' }).fingerprint).toBe(before.fingerprint);
    expect(
      (
        db.prepare('SELECT pan_ciphertext FROM vault_cards WHERE id = ?').get(before.id) as { pan_ciphertext: Buffer }
      ).pan_ciphertext.equals(ciphertext),
    ).toBe(true);
    expect(() => openVault(key)).toThrow(/neither VAULT_KEY nor a retired key/);
  });

  it('a fresh installation gets a random root, not its key', () => {
    const fresh = new Database(':memory:');
    const freshKey = loadVaultKey({});
    const keys = new VaultKeys(fresh, keyRing(freshKey));
    expect(keys.root().equals(freshKey)).toBe(false);
    expect(new VaultKeys(fresh, keyRing(freshKey)).root().equals(keys.root())).toBe(true);
    fresh.close();
  });

  it('seals a security code with the card: it opens for that card and purpose only, and dies with the card', () => {
    const stored = vault.store('shop-a', { number: pan, expirationDate: '12/30' });
    const other = vault.store('shop-a', { number: '4111111111111111', expirationDate: '12/30' });
    const sealed = vault.sealWithCard('shop-a', stored.id, 'security_code', '123');
    expect(sealed).not.toContain('123');
    expect(vault.openWithCard('shop-a', stored.id, 'security_code', sealed)).toBe('123');
    expect(vault.openWithCard('shop-a', other.id, 'security_code', sealed)).toBeNull();
    expect(vault.openWithCard('shop-a', stored.id, 'pin', sealed)).toBeNull();
    expect(vault.openWithCard('shop-b', stored.id, 'security_code', sealed)).toBeNull();
    vault.remove('shop-a', stored.id);
    expect(vault.openWithCard('shop-a', stored.id, 'security_code', sealed)).toBeNull();
    expect(() => vault.sealWithCard('shop-a', stored.id, 'security_code', '123')).toThrow(RangeError);
  });

  it('replaces a number or an expiry (account updater) under the same key', () => {
    const stored = vault.store('shop-a', { number: pan, expirationDate: '12/30' }, { buyerId: 'b' });
    const expiry = vault.replace('shop-a', stored.id, { expirationDate: '12/33' });
    expect(expiry).toMatchObject({ expirationDate: '12/33', last4: stored.last4, fingerprint: stored.fingerprint });
    const number = vault.replace('shop-a', stored.id, { number: '4111111111111111' });
    expect(number).toMatchObject({ expirationDate: '12/33', last4: '1111', bin: '411111' });
    expect(number.fingerprint).not.toBe(stored.fingerprint);
    expect(vault.reveal('shop-a', stored.id)).toEqual({ number: '4111111111111111', expirationDate: '12/33' });
    expect(() => vault.replace('shop-a', stored.id, { number: '4111111111111112' })).toThrow(/Luhn/);
    expect(() => vault.replace('shop-a', 'missing', { expirationDate: '12/33' })).toThrow(RangeError);
  });
});

describe('the commit of a stored card', () => {
  /** The `synchronous` pragmas `store` runs (SQLite's trace of a connection), and the setting after it. */
  const synchronousPragmas = (syncedByEvents: boolean): { pragmas: string[]; after: unknown } => {
    const statements: string[] = [];
    const traced = new Database(dbFile, { verbose: (sql) => void statements.push(String(sql)) });
    try {
      traced.pragma('synchronous = FULL');
      const card = new CardVault(traced, { keys: new VaultKeys(traced, keyRing(key)), newId, syncedByEvents });
      statements.length = 0;
      card.store('shop-a', { number: pan, expirationDate: '12/30' });
      const pragmas = statements.filter((sql) => /^PRAGMA synchronous/.test(sql));
      return { pragmas, after: traced.pragma('synchronous', { simple: true }) };
    } finally {
      traced.close();
    }
  };

  it('skips its own fsync when the events are committed on the same connection after it, then restores FULL', () => {
    expect(synchronousPragmas(true)).toEqual({
      pragmas: ['PRAGMA synchronous', 'PRAGMA synchronous = 1', 'PRAGMA synchronous = 2'],
      after: 2,
    });
  });

  it('is synced on its own otherwise (events in EventStoreDB)', () => {
    expect(synchronousPragmas(false)).toEqual({ pragmas: [], after: 2 });
  });
});
