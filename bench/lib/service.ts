/**
 * Processes for the benchmarks: the embedded service (`npm start`'s entry) and the baselines run as child
 * processes of the benchmark, so that CPU and memory can be read per process from /proc.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { npmStartNodeFlags } from '@switchyard/testing/src/processes';
import type { SigningKey } from './tokens';

export const repoRoot = path.resolve(__dirname, '../..');
const register = path.join(repoRoot, 'scripts/register.cjs');

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The Node.js that runs a child and the module it preloads (`-r`): by default this process's own runtime with
 * scripts/register.cjs; bench/node-ab.ts also runs the service on another (bench/lib/node20-compat.cjs).
 */
export interface Runtime {
  readonly execPath: string;
  readonly preload: string;
  readonly env?: Readonly<Record<string, string>>;
}

export const defaultRuntime: Runtime = { execPath: process.execPath, preload: register };

export interface ChildService {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything the process wrote (stdout and stderr, last 64 KB). */
  output(): string;
  stop(): Promise<void>;
}

/** Runs a TypeScript entry of the repository as a child process (`node -r scripts/register.cjs <entry>`). */
export function startTs(
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  args: string[] = [],
  runtime = defaultRuntime,
): ChildService {
  const child = spawn(runtime.execPath, [...nodeArgs, '-r', runtime.preload, path.join(repoRoot, entry), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...runtime.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  if (child.pid === undefined) throw new Error(`could not start ${entry}`);
  return {
    child,
    pid: child.pid,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Polls `url` until it answers 2xx. */
export async function waitForHttp(url: string, service: ChildService, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null)
      throw new Error(`process exited (${service.child.exitCode}) before ${url} answered:\n${service.output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last}):\n${service.output()}`);
}

/** Runs the operator CLI (`npm run cli`'s entry) as a child process; resolves its stdout, rejects on a non-zero exit. */
export function runCli(env: Record<string, string>, ...args: string[]): Promise<string> {
  return runCliOn(defaultRuntime, env, ...args);
}

/** runCli on the given runtime. */
export function runCliOn(runtime: Runtime, env: Record<string, string>, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const argv = ['-r', runtime.preload, path.join(repoRoot, 'tools/cli/src/main.ts'), ...args];
    execFile(
      runtime.execPath,
      argv,
      { cwd: repoRoot, env: { ...process.env, ...runtime.env, ...env } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`cli ${args.join(' ')} failed: ${stderr || String(error)}`)) : resolve(stdout),
    );
  });
}

export interface EmbeddedService extends ChildService {
  readonly url: string;
  readonly dataDir: string;
  readonly key: SigningKey;
}

/**
 * `npm start` on embedded defaults in a fresh data directory: an administrator API key is created first with the CLI
 * (same DATA_DIR), then the service starts on a free loopback port with logs off and the in-process simulator, with
 * `npm start`'s node flags. `stop()` also removes the data directory.
 */
export async function startEmbeddedService(
  options: { nodeArgs?: string[]; env?: Record<string, string>; runtime?: Runtime } = {},
): Promise<EmbeddedService> {
  const runtime = options.runtime ?? defaultRuntime;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', HOST: '127.0.0.1' };
  const created = JSON.parse(
    await runCliOn(runtime, env, 'api-keys', 'create', '--display-name', 'bench', '--role', 'administrator'),
  ) as { kid: string; private_key: string };
  const port = await freePort();
  const nodeArgs = [...npmStartNodeFlags(), ...(options.nodeArgs ?? [])];
  const service = startTs(
    'services/standalone/src/main.ts',
    { ...env, PORT: String(port), ...options.env },
    nodeArgs,
    [],
    runtime,
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/healthz`, service);
  } catch (error) {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...service,
    url,
    dataDir,
    key: { kid: created.kid, privateKeyPem: created.private_key },
    stop: async () => {
      await service.stop();
      // BENCH_KEEP_DATA=1: the data directory stays, for a look at what the run wrote (e.g. the transactions.db that
      // bench/transactions-list.bench.ts --db reads).
      if (process.env.BENCH_KEEP_DATA === '1') process.stdout.write(`bench: data kept in ${dataDir}\n`);
      else rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts a baseline child that prints one JSON line `{ "url": ... }` on stdout once it listens. */
export async function startBaseline(
  entry: string,
  env: Record<string, string> = {},
): Promise<ChildService & { url: string }> {
  const service = startTs(entry, env);
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => reject(new Error(`${entry} did not report its address:\n${service.output()}`)),
      60_000,
    );
    service.child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    service.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited (${code}):\n${service.output()}`));
    });
  });
  return { ...service, url };
}
