/**
 * Issue 23, item 3: stopping `npm start` stops the server. npm forwards SIGINT and SIGTERM to the server it runs,
 * but not SIGHUP (a closed terminal, `kill -HUP`), and nothing reaches the server when npm is killed outright: the
 * server then has to notice that its npm is gone. Each case spawns `npm start` in a process group of its own,
 * signals npm alone, and waits for the port to close and the server process to be gone. SIGINT and SIGTERM, which
 * npm forwards: tests/runtime/npm-start.e2e.spec.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { createTestDataDir, freePort, removeTestDataDir, repoRoot, waitFor } from '@switchyard/testing';

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function startNpm(
  name: string,
): Promise<{ npm: ChildProcess; port: number; serverPid: number; output(): string; dataDir: string }> {
  const port = await freePort();
  const dataDir = createTestDataDir(name);
  const npm = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', DEMO_CHECKOUT: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: a signal to npm reaches npm alone
  });
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(
    'npm start listening',
    async () => ((await portOpen(port)) ? true : undefined),
    90_000,
    () => output,
  );
  const serverPid = await waitFor(
    'the server pid',
    async () => Number(/"pid":(\d+)/.exec(output)?.[1]) || undefined,
    10_000,
    () => output,
  );
  return { npm, port, serverPid, output: () => output, dataDir };
}

describe('npm start stops when its npm is stopped', () => {
  const started: { npm: ChildProcess; serverPid: number; dataDir: string }[] = [];

  afterAll(() => {
    for (const { npm, serverPid, dataDir } of started) {
      for (const pid of [serverPid, npm.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      removeTestDataDir(dataDir);
    }
  });

  it.each(['SIGHUP', 'SIGKILL'] as const)(
    '%s to npm closes the port and ends the server',
    async (signal) => {
      const run = await startNpm(`npm-start-${signal.toLowerCase()}`);
      started.push({ npm: run.npm, serverPid: run.serverPid, dataDir: run.dataDir });
      expect(run.serverPid).not.toBe(run.npm.pid);
      process.kill(run.npm.pid!, signal);
      await waitFor(
        `the port closed after ${signal}`,
        async () => ((await portOpen(run.port)) ? undefined : true),
        10_000,
        run.output,
      );
      await waitFor(
        `the server process gone after ${signal}`,
        async () => (alive(run.serverPid) ? undefined : true),
        10_000,
        run.output,
      );
    },
    150_000,
  );
});
