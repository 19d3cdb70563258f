/** What the catalog's roles grant on the resources whose access is decided role by role. */
import { grantsCover } from '@switchyard/auth';
import { findRoleBySlug, roleCatalog } from './role-catalog';

const grants = (slug: string): readonly string[] => {
  const role = findRoleBySlug(slug);
  if (!role) throw new Error(`no role ${slug}`);
  return role.permissions;
};

describe('webhook subscriptions (configuration, like payment services)', () => {
  it.each([
    ['administrator', true, true],
    ['system-manager', true, true],
    ['analyst', true, false],
    ['integration', false, false],
    ['pii-viewer', false, false],
    ['key-manager', false, false],
  ])('%s: read %s, write %s', (slug, canRead, canWrite) => {
    expect(grantsCover(grants(slug), 'webhook-subscriptions.read')).toBe(canRead);
    expect(grantsCover(grants(slug), 'webhook-subscriptions.write')).toBe(canWrite);
  });

  it('covers every role of the catalog', () =>
    expect(roleCatalog.map((role) => role.slug).sort()).toEqual([
      'administrator',
      'analyst',
      'integration',
      'key-manager',
      'pii-viewer',
      'system-manager',
    ]));
});
