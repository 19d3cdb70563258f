/**
 * Where the served scripts come from: bundled from the sources when esbuild is installed, else the files
 * `npm run build:secure-fields` wrote (an install without dev dependencies), else an error saying what to run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SecureFieldsAssets } from './secure-fields-assets';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-secure-fields-dist-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const withoutEsbuild = async () => null;

it('bundles the sources when esbuild is installed, once per instance', async () => {
  const assets = new SecureFieldsAssets({ builtDir: dir });
  const module = await assets.get('secure-fields.js');
  expect(module.body).toMatch(/export\s*\{[^}]*as SecureFields\b/);
  expect(module.etag).toMatch(/^"[\w-]{27}"$/);
  expect(await assets.get('secure-fields.js')).toBe(module);
  expect((await assets.get('frame.js')).body).toContain('postMessage');
});

it('serves the built files without esbuild', async () => {
  fs.writeFileSync(path.join(dir, 'secure-fields.js'), 'export const built = 1;\n');
  fs.writeFileSync(path.join(dir, 'frame.js'), 'export const frame = 1;\n');
  const assets = new SecureFieldsAssets({ loadEsbuild: withoutEsbuild, builtDir: dir });
  expect((await assets.get('secure-fields.js')).body).toBe('export const built = 1;\n');
  expect((await assets.get('frame.js')).body).toBe('export const frame = 1;\n');
});

it('says what to run when neither is there, and tries again on the next request', async () => {
  const assets = new SecureFieldsAssets({ loadEsbuild: withoutEsbuild, builtDir: dir });
  await expect(assets.get('secure-fields.js')).rejects.toThrow('npm run build:secure-fields');
  fs.writeFileSync(path.join(dir, 'secure-fields.js'), 'export {};\n');
  fs.writeFileSync(path.join(dir, 'frame.js'), 'export {};\n');
  expect((await assets.get('secure-fields.js')).body).toBe('export {};\n');
});
