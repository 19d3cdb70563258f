// Runs the TypeScript sources directly: SWC compiles each file on load (decorator metadata included, which
// NestJS dependency injection needs), so `npm install && npm start` works with no build step.
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || require('node:path').join(__dirname, '..', 'tsconfig.base.json');
require('@swc-node/register');
