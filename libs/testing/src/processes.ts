/** Runs the project's TypeScript entry points as real child processes, the way `npm start` does. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { artifactFile } from './artifacts';

export const repoRoot = path.resolve(__dirname, '../../..');

/**
 * The node flags of `npm start` (package.json's `start` script, e.g. its heap ceiling): what the benchmarks and the
 * specs of those flags run the entry with.
 */
export function npmStartNodeFlags(): string[] {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const match = /^(?:exec\s+)?node\s+(.*?)\s*-r\s/.exec(scripts.start ?? '');
  return match?.[1] ? match[1].split(/\s+/) : [];
}

export interface RunningProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGKILL, and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function startTsProcess(entry: string, env: Record<string, string>, args: string[] = []): RunningProcess {
  const child = spawn(
    process.execPath,
    ['-r', path.join(repoRoot, 'scripts/register.cjs'), path.join(repoRoot, entry), ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  // Kept for the data-protection scan when the run keeps its artifacts (every log line a service wrote).
  const kept = artifactFile('logs', path.basename(entry, '.ts'));
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (kept) fs.appendFileSync(kept, chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return {
    child,
    output: () => output,
    kill: (signal: NodeJS.Signals = 'SIGKILL') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  describeFailure: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `${what} not reached within ${timeoutMs} ms${lastError ? ` (last error: ${String(lastError)})` : ''}\n${describeFailure()}`,
  );
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the operator CLI as an operator does, a separate process, with `env` added to this process's. */
export function runCli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', path.join(repoRoot, 'scripts/register.cjs'), path.join(repoRoot, 'tools/cli/src/main.ts'), ...args],
      { cwd: repoRoot, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** As `runCli`, with `input` written to the CLI's standard input (then closed): a password for `--password-stdin`. */
export function runCliWithInput(env: Record<string, string>, input: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['-r', path.join(repoRoot, 'scripts/register.cjs'), path.join(repoRoot, 'tools/cli/src/main.ts'), ...args],
      { cwd: repoRoot, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}
