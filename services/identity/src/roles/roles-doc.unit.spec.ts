/** docs/roles-and-permissions.md describes role-catalog.ts; this keeps its table from drifting. */
import fs from 'node:fs';
import path from 'node:path';
import { roleCatalog } from './role-catalog';

const doc = fs.readFileSync(path.resolve(__dirname, '../../../../docs/roles-and-permissions.md'), 'utf8');
const rows = new Map(
  doc
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      return [cells[1]?.replace(/`/g, '') ?? '', cells] as const;
    }),
);

describe('the roles table of docs/roles-and-permissions.md', () => {
  it('has one row per role and no other', () =>
    expect([...rows.keys()].sort()).toEqual(roleCatalog.map((role) => role.slug).sort()));

  it.each(roleCatalog.map((role) => [role.slug, role] as const))('matches the catalog for %s', (slug, role) => {
    const [, , assignableTo = '', extendsCell = '', standalone = ''] = rows.get(slug) ?? [];
    for (const kind of role.assignableTo) expect(assignableTo).toContain(kind);
    for (const kind of ['user', 'api-key-pair'].filter((kind) => !role.assignableTo.includes(kind as never))) {
      expect(assignableTo).not.toMatch(new RegExp(`(^|[ ,])${kind}([ ,]|$)`));
    }
    for (const extended of role.appliesTo) expect(extendsCell).toContain(`\`${extended}\``);
    expect(standalone.startsWith(role.isStandaloneAssignable ? 'yes' : 'no')).toBe(true);
  });
});
