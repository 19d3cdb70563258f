/**
 * Issue 19 item 4: the transactions service holds no card number, so it has nothing to encrypt or decrypt with the
 * vault's cipher or keys. At most `main.ts` (it hosts the vault service until the vault has a process of its own) and
 * `transactions-service.ts` (a type) import `@switchyard/vault`; none of its code names the cipher, the keys or the
 * card vault, nor reaches into the vault's sources by path.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = __dirname;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [file] : [];
  });
}

/** Every module specifier a file imports or re-exports, and the names it imports from `@switchyard/vault`. */
function imports(text: string): { specifiers: string[]; vaultNames: string[] } {
  const specifiers: string[] = [];
  const vaultNames: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s+(?:type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g)) {
    const [, names = '', specifier = ''] = match;
    specifiers.push(specifier);
    if (specifier.startsWith('@switchyard/vault'))
      vaultNames.push(...(names.match(/[A-Za-z_$][\w$]*/g) ?? []).filter((name) => name !== 'type'));
  }
  for (const match of text.matchAll(/(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g))
    specifiers.push(match[1] ?? '');
  return { specifiers, vaultNames };
}

const files = sources(root);

it('finds the service sources', () => {
  expect(files.length).toBeGreaterThan(20);
  expect(files.map((file) => path.relative(root, file))).toContain('vault-port.ts');
});

it("imports neither the vault's cipher nor its keys nor its card vault", () => {
  const offending: string[] = [];
  for (const file of files) {
    const { specifiers, vaultNames } = imports(fs.readFileSync(file, 'utf8'));
    const where = path.relative(root, file);
    for (const specifier of specifiers) {
      if (/vault-cipher|vault-keys|card-vault/.test(specifier)) offending.push(`${where}: ${specifier}`);
      // The vault's sources only through its package's entry point.
      if (specifier.startsWith('@switchyard/vault/') || /(^|\/)vault\/src\//.test(specifier))
        offending.push(`${where}: ${specifier}`);
    }
    for (const name of vaultNames)
      if (/Cipher|VaultKey|KeyRing|CardVault|loadVaultKey|associatedData/i.test(name))
        offending.push(`${where}: ${name}`);
  }
  expect(offending).toEqual([]);
});

it('imports @switchyard/vault only where the vault service is hosted or typed', () => {
  const importing = files
    .filter((file) => imports(fs.readFileSync(file, 'utf8')).specifiers.some((s) => s.startsWith('@switchyard/vault')))
    .map((file) => path.relative(root, file))
    .sort();
  // main.ts drops out once the vault runs in a process of its own.
  expect(['main.ts', 'transactions-service.ts']).toEqual(expect.arrayContaining(importing));
});
