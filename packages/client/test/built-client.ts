/** The client as a merchant installs it: built from the sources now (ESM and CommonJS), loaded from the build. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCli } from '@switchyard/testing';
import { buildClient, defaultOutDir, type BuiltClient } from '../build/bundle';
import type { BuiltClientModule } from './client-flows';

/**
 * Builds into a folder of its own under `dist/` (gitignored; under the package, so the build's `openapi-fetch`
 * import resolves as in an installation), so parallel test files never read each other's half-written build.
 */
export async function buildClientForTest(): Promise<{
  built: BuiltClient;
  esm(): Promise<BuiltClientModule>;
  cjs(): BuiltClientModule;
  remove(): void;
}> {
  const outDir = path.join(defaultOutDir, `test-${process.pid}-${randomBytes(4).toString('hex')}`);
  const built = await buildClient(outDir);
  return {
    built,
    esm: async () => (await import(/* @vite-ignore */ pathToFileURL(built.esm).href)) as BuiltClientModule,
    cjs: () => createRequire(__filename)(built.cjs) as BuiltClientModule,
    remove: () => fs.rmSync(outDir, { recursive: true, force: true }),
  };
}

/** `api-keys create` by the operator CLI against the installation `env` names; the key file's path. */
export async function createKeyFile(env: Record<string, string>, dir: string, cli = runCli): Promise<string> {
  const created = await cli(env, 'api-keys', 'create', '--display-name', 'client tests', '--role', 'administrator');
  if (created.code !== 0) throw new Error(`api-keys create failed (${created.code}): ${created.stderr}`);
  const keyFile = path.join(dir, 'client-key.json');
  fs.writeFileSync(keyFile, created.stdout, { mode: 0o600 });
  return keyFile;
}
