import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// The tests' workers run on the Node.js that runs vitest (process.execPath): better-sqlite3 13 crashes Node.js 20.
if (Number(process.versions.node.split('.')[0]) < 22) {
  throw new Error(
    `the tests need Node.js 24 (package.json devDependencies.node), not ${process.version}: run npm test or npx vitest`,
  );
}

// SWC (not esbuild) compiles the tests so that NestJS decorator metadata is emitted, as at run time.
export default defineConfig({
  // @switchyard/client's package.json names its build (dist/, not committed): specs in process use its sources; the
  // client's own specs and the examples run as processes load the build they make first.
  resolve: {
    alias: { '@switchyard/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) },
  },
  plugins: [
    swc.vite({
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { decoratorMetadata: true, legacyDecorator: true },
        target: 'es2022',
      },
    }),
  ],
  test: {
    include: [
      'libs/**/*.spec.ts',
      'services/**/*.spec.ts',
      'tools/**/*.spec.ts',
      'tests/**/*.spec.ts',
      'packages/**/*.spec.ts',
      'bench/**/*.spec.ts',
    ],
    globals: true,
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
