// Runs the TypeScript sources directly, so `npm install && npm start` works with no build step: each .ts file is
// compiled by SWC (@swc-node/register's own compile, decorator metadata included, which NestJS dependency injection
// needs) the first time its exact content is loaded, and the JavaScript is kept in node_modules/.cache/switchyard-ts,
// keyed by a hash of the file's path and content and of the compiler's versions and settings. Every later load of
// that content (the next start, the other processes of the distributed runtime, worker threads) reads the compiled
// file and never loads the compiler: SWC's binding and TypeScript (which @swc-node/register needs for tsconfig) cost
// about 85 MB of memory and a second of start-up in each process (docs/performance.md, Start-up and memory).
// An edited file has another hash, so nothing stale ever runs. Stack traces point into the .ts files through each
// compiled file's source map (Node's own source map support, for these files only).
//
// npm scripts run it on the Node.js 24 that package.json pins (node_modules/.bin/node); a `node` run by hand may be
// the machine's Node.js 20, on which better-sqlite3 13 crashes (SIGSEGV) at the first query: say so instead.
if (Number(process.versions.node.split('.')[0]) < 22) {
  throw new Error(
    `Switchyard needs Node.js 24 (package.json devDependencies.node); this is ${process.version}. ` +
      'Run it through npm (npm start, npm run cli, …) or with node_modules/.bin/node.',
  );
}
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const root = path.join(__dirname, '..');
const project = process.env.SWC_NODE_PROJECT || path.join(root, 'tsconfig.base.json');
process.env.SWC_NODE_PROJECT = project;
const cacheDir = process.env.SWITCHYARD_TS_CACHE || path.join(root, 'node_modules', '.cache', 'switchyard-ts');

/** What the compiled output depends on besides a file's path and content. */
function compilerSalt() {
  const version = (name) => {
    // Not `require('<name>/package.json')`: packages with an exports map do not export it.
    const entry = require.resolve(name, { paths: [path.dirname(require.resolve('@swc-node/register'))] });
    for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const file = path.join(dir, 'package.json');
      if (fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')).name === name) {
        return JSON.parse(fs.readFileSync(file, 'utf8')).version;
      }
    }
    throw new Error(`no package.json of ${name}`);
  };
  return [
    version('@swc-node/register'),
    version('@swc-node/core'),
    version('@swc/core'),
    fs.readFileSync(project, 'utf8'),
    process.env.SWC_NODE_SOURCE_MAP_MODE ?? '',
  ].join('\n');
}
const salt = compilerSalt();

let compileWithSwc;
/** @swc-node/register's compile of one file, loaded on the first file not compiled before. */
function compile(source, filename) {
  if (!compileWithSwc) {
    // @swc-node/register's own dependencies, as it resolves them (they are not this project's).
    const ofRegister = (name) =>
      require(require.resolve(name, { paths: [path.dirname(require.resolve('@swc-node/register'))] }));
    const { readDefaultTsConfig, tsCompilerOptionsToSwcConfig } = require('@swc-node/register/read-default-tsconfig');
    const { transformSync } = ofRegister('@swc-node/core');
    const ts = ofRegister('typescript');
    const options = { ...readDefaultTsConfig(project), module: ts.ModuleKind.CommonJS };
    compileWithSwc = (code, file) => transformSync(code, file, tsCompilerOptionsToSwcConfig(options, file));
  }
  return compileWithSwc(source, filename);
}

/** Writes a file whole or not at all (processes starting together may compile the same file). */
function writeAtomically(file, content) {
  const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(partial, content);
  fs.renameSync(partial, file);
}

function compiled(source, filename) {
  const key = crypto.createHash('sha256').update(salt).update('\0').update(filename).update('\0').update(source);
  const base = path.join(cacheDir, key.digest('hex'));
  try {
    return fs.readFileSync(`${base}.js`, 'utf8');
  } catch {
    // Not compiled yet.
  }
  const { code, map } = compile(source, filename);
  const withMap = map ? `${code}\n//# sourceMappingURL=${base}.js.map` : code;
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    if (map) writeAtomically(`${base}.js.map`, map);
    writeAtomically(`${base}.js`, withMap);
  } catch {
    // A read-only installation: compiled again by the next process.
  }
  return withMap;
}

Module.setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
require.extensions['.ts'] = (module, filename) => {
  module._compile(compiled(fs.readFileSync(filename, 'utf8'), filename), filename);
};
