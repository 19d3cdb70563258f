/**
 * The embedded service as `npm start` runs it: `services/standalone/src/main.ts` in a child process with its own
 * environment (DATA_DIR, PORT, …), which a crash suite kills with SIGKILL and starts again with the same data
 * directory and environment. Also: an API key made by the operator CLI, as an operator would.
 */
import { freePort, runCli, signToken, startTsProcess, type RunningProcess } from '@switchyard/testing';
import { sleep } from './random';

export interface StandaloneService {
  /** `http://127.0.0.1:<PORT>` */
  readonly url: string;
  /** The environment it runs with (the same at every start). */
  readonly env: Readonly<Record<string, string>>;
  /** How many times it was started. */
  readonly starts: number;
  /** Whether the current process is running. */
  readonly running: boolean;
  /** SIGKILL, and wait for the exit. */
  kill9(): Promise<void>;
  /** Starts it again (same DATA_DIR and environment) and waits until `/readyz` answers 200. */
  restart(): Promise<void>;
  /** SIGTERM: a clean stop. */
  stop(): Promise<void>;
  /** What the current and the previous processes wrote (the last `chars` characters), for failure messages. */
  output(chars?: number): string;
}

export interface StandaloneOptions {
  /** How long a start may take to become ready. Default 60 s. */
  readonly readyTimeoutMs?: number;
  /** The entry point; default the embedded runtime. */
  readonly entry?: string;
}

/**
 * Starts the service and waits until it is ready. `env` must hold DATA_DIR; PORT is chosen when absent, and HOST
 * defaults to 127.0.0.1.
 */
export async function startStandaloneProcess(
  env: Record<string, string>,
  options: StandaloneOptions = {},
): Promise<StandaloneService> {
  if (!env.DATA_DIR) throw new Error('startStandaloneProcess needs DATA_DIR');
  const fullEnv: Record<string, string> = { HOST: '127.0.0.1', ...env, PORT: env.PORT ?? String(await freePort()) };
  const url = `http://127.0.0.1:${fullEnv.PORT}`;
  const entry = options.entry ?? 'services/standalone/src/main.ts';
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  let current: RunningProcess | undefined;
  let earlier = '';
  let starts = 0;

  const output = (chars = 20_000) =>
    `${earlier}${current ? `\n--- start ${starts} ---\n${current.output()}` : ''}`.slice(-chars);

  const start = async (): Promise<void> => {
    if (current) earlier += `\n--- start ${starts} ---\n${current.output().slice(-5_000)}`;
    const child = startTsProcess(entry, fullEnv);
    current = child;
    starts += 1;
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (child.child.exitCode !== null || child.child.signalCode !== null)
        throw new Error(`the service exited while starting (start ${starts})\n${output()}`);
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ready) return;
      if (Date.now() > deadline)
        throw new Error(`the service was not ready within ${readyTimeoutMs} ms (start ${starts})\n${output()}`);
      await sleep(50);
    }
  };

  await start();
  return {
    url,
    env: fullEnv,
    get starts() {
      return starts;
    },
    get running() {
      return current !== undefined && current.child.exitCode === null && current.child.signalCode === null;
    },
    kill9: async () => {
      await current?.kill('SIGKILL');
    },
    restart: start,
    stop: async () => {
      await current?.kill('SIGTERM');
    },
    output,
  };
}

export interface ApiKeyFile {
  readonly id: string;
  readonly kid: string;
  readonly private_key: string;
}

/** `cli api-keys create` against the data directory of `env` (the server may be running or not). */
export async function createApiKey(
  env: Record<string, string>,
  role = 'administrator',
  displayName = 'reliability',
): Promise<ApiKeyFile> {
  const created = await runCli(env, 'api-keys', 'create', '--display-name', displayName, '--role', role);
  if (created.code !== 0) throw new Error(`api-keys create failed (${created.code}): ${created.stderr}`);
  return JSON.parse(created.stdout) as ApiKeyFile;
}

/** A bearer token of the key with every read and write scope, valid for `seconds`. */
export const bearerToken = (key: ApiKeyFile, seconds = 3_600): Promise<string> =>
  signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes: ['*.read', '*.write'], expiresIn: seconds });
