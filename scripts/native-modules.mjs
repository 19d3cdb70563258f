#!/usr/bin/env node
// `npm install`'s last step (the root package's postinstall): every native module must load in the runtime that
// runs the project — the `node` on PATH inside npm scripts, i.e. the Node.js 24 that package.json pins
// (devDependencies.node, node_modules/.bin/node), or the shell's Node.js when that package is not installed.
//
// None is compiled at install time: better-sqlite3 13, @node-rs/argon2 and @swc/core ship N-API binaries for each
// platform, esbuild an executable. A binary that does not fit (a platform without a prebuilt one, or a runtime too
// old for it: better-sqlite3 13 crashes Node.js 20 with SIGSEGV on load) fails the install here, with the reason,
// instead of the service at its first query. Each module loads in a child process, so that a crash is reported.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(new URL('..', import.meta.url).pathname);

const checks = {
  'better-sqlite3': `const Database = require('better-sqlite3');
    const db = new Database(':memory:'); db.prepare('select sqlite_version() as v').get(); db.close();`,
  '@node-rs/argon2': `require('@node-rs/argon2').hashSync('x', { memoryCost: 1024, timeCost: 1 });`,
  '@swc/core': `require('@swc/core').transformSync('const a: number = 1', { jsc: { parser: { syntax: 'typescript' } } });`,
  esbuild: `require('esbuild').transformSync('let a = 1');`,
};

const failures = [];
for (const [name, code] of Object.entries(checks)) {
  if (!existsSync(path.join(root, 'node_modules', name, 'package.json'))) continue;
  const result = spawnSync(process.execPath, ['-e', code], { cwd: root, encoding: 'utf8' });
  if (result.status === 0) continue;
  const reason = result.signal
    ? `killed by ${result.signal}`
    : (result.stderr.split('\n').find((line) => /Error/.test(line)) ?? result.stderr.trim());
  failures.push(`${name}: ${reason || result.error}`);
}

if (failures.length > 0) {
  console.error(`native modules: these do not load in Node.js ${process.version} (${process.execPath}):`);
  for (const failure of failures) console.error(`  ${failure}`);
  console.error('Switchyard runs on the Node.js that package.json pins (devDependencies.node); see README.md.');
  process.exit(1);
}
console.log(
  `native modules: better-sqlite3, @node-rs/argon2, @swc/core and esbuild load in Node.js ${process.version}`,
);
