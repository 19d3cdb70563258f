/**
 * scripts/register.cjs, which every process of the project starts with (`node -r ./scripts/register.cjs`): a .ts file
 * is compiled once per content and later loads read the compiled file without loading the compiler; an edited file
 * is compiled again, never served stale; stack traces point into the .ts source.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@switchyard/testing';

let dir: string;
let cache: string;
let source: string;

/** Runs `script` (JavaScript) in a fresh process with the loader and this spec's cache; its stdout as JSON. */
function run(script: string): Record<string, unknown> {
  const result = spawnSync(process.execPath, ['-r', path.join(repoRoot, 'scripts/register.cjs'), '-e', script], {
    cwd: repoRoot,
    env: { ...process.env, SWITCHYARD_TS_CACHE: cache },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`exit ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

const loadAndThrow = () =>
  run(`
    const loaded = require(${JSON.stringify(source)});
    let stack = '';
    try { loaded.explode({ name: 'x' }); } catch (error) { stack = error.stack; }
    const modules = Object.keys(require.cache);
    console.log(JSON.stringify({
      value: loaded.value,
      frame: stack.split('\\n')[1],
      compilerLoaded: modules.some((m) => m.includes('/typescript/') || m.includes('/@swc/core/')),
    }));
  `);

const write = (value: number) =>
  fs.writeFileSync(
    source,
    [
      'interface Shape {',
      '  readonly name: string;',
      '}',
      '',
      `export const value: number = ${value};`,
      '',
      'export function explode(shape: Shape): never {',
      "  throw new Error('boom ' + shape.name);", // line 8
      '}',
      '',
    ].join('\n'),
  );

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-register-'));
  cache = path.join(dir, 'cache');
  source = path.join(dir, 'module.ts');
});

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('scripts/register.cjs', () => {
  it('compiles a file once: the next process reads the compiled file and never loads the compiler', () => {
    write(1);
    expect(loadAndThrow()).toMatchObject({ value: 1, compilerLoaded: true });
    expect(fs.readdirSync(cache).filter((file) => file.endsWith('.js'))).toHaveLength(1);
    expect(loadAndThrow()).toMatchObject({ value: 1, compilerLoaded: false });
  });

  it('compiles an edited file again: what runs is always the file as it is now', () => {
    write(1);
    loadAndThrow();
    write(2);
    expect(loadAndThrow()).toMatchObject({ value: 2, compilerLoaded: true });
    expect(loadAndThrow()).toMatchObject({ value: 2, compilerLoaded: false });
  });

  it('maps stack traces to the .ts source, compiled now or read from the cache', () => {
    write(1);
    for (const _ of [1, 2]) expect(loadAndThrow().frame).toContain(`${source}:8:`);
  });
});
