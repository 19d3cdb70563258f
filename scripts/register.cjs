// Runs the TypeScript sources directly: SWC compiles each file on load (decorator metadata included, which
// NestJS dependency injection needs), so `npm install && npm start` works with no build step.
// npm scripts run it on the Node.js 24 that package.json pins (node_modules/.bin/node); a `node` run by hand may be
// the machine's Node.js 20, on which better-sqlite3 13 crashes (SIGSEGV) at the first query: say so instead.
if (Number(process.versions.node.split('.')[0]) < 22) {
  throw new Error(
    `Switchyard needs Node.js 24 (package.json devDependencies.node); this is ${process.version}. ` +
      'Run it through npm (npm start, npm run cli, …) or with node_modules/.bin/node.',
  );
}
process.env.SWC_NODE_PROJECT =
  process.env.SWC_NODE_PROJECT || require('node:path').join(__dirname, '..', 'tsconfig.base.json');
require('@swc-node/register');
