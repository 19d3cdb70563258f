#!/usr/bin/env node
// The test command: `npm test [-- unit|int|e2e] [-- --require-infra] [vitest args...]`.
// --require-infra (CI) turns every infrastructure skip (Kafka, Redis, PostgreSQL) into a failure; EventStoreDB
// alone may still skip, since no server for it can run on the project's machines.
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const tiers = { unit: '.unit.spec.ts', int: '.int.spec.ts', e2e: '.e2e.spec.ts' };
const env = { ...process.env };
const vitestArgs = ['run'];
for (const arg of args) {
  if (arg === '--require-infra') env.SWITCHYARD_REQUIRE_INFRA = '1';
  else if (arg in tiers) vitestArgs.push(tiers[arg]);
  else vitestArgs.push(arg);
}
const vitest = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname;
// Path filters are relative to the repository root, also when Nx runs a package's `test` script in its folder.
const result = spawnSync(process.execPath, [vitest, ...vitestArgs], {
  stdio: 'inherit',
  env,
  cwd: new URL('..', import.meta.url).pathname,
});
process.exit(result.status ?? 1);
