/**
 * The README's `npm start`, as a person or a process manager runs it: the service runs on the pinned Node.js
 * (package.json devDependencies.node, which npm puts first on PATH), and a SIGTERM or SIGINT sent to the npm process
 * alone (not its process group, as Ctrl-C would) stops the server, with npm exiting as the server did.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, repoRoot, waitFor } from '@switchyard/testing';

const pinnedNode = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  }
).devDependencies.node;

describe('npm start', () => {
  let npm: ChildProcess | undefined;
  let dataDir: string | undefined;

  afterEach(() => {
    // npm runs in a process group of its own: whatever it left running (a server that outlived it) goes too.
    if (npm?.pid !== undefined) {
      try {
        process.kill(-npm.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'runs on the pinned Node.js and stops on %s sent to npm',
    async (signal) => {
      const port = await freePort();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-npm-start-'));
      let output = '';
      npm = spawn('npm', ['start'], {
        cwd: repoRoot,
        detached: true,
        env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => npm!.once('exit', (code) => resolve(code)));
      const url = `http://127.0.0.1:${port}/healthz`;

      const health = await waitFor(
        '/healthz answering',
        async () => {
          const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
          return response.ok ? ((await response.json()) as { status: string; node: string }) : undefined;
        },
        60_000,
        () => output,
      );
      expect(health).toEqual({ status: 'ok', node: `v${pinnedNode}` });

      npm.kill(signal);
      const code = await Promise.race([
        exited,
        new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 15_000)),
      ]);
      expect(code, output).toBe(0);
      const stillAnswers = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
        () => true,
        () => false,
      );
      expect(stillAnswers, 'the server outlived npm').toBe(false);
    },
    90_000,
  );
});
