import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { keyValueContract } from '../contract';
import { InMemoryKeyValueStore } from './in-memory-key-value-store';

// Once with the sweep out of the way, so that lazy expiry on access alone is held to the contract, and once
// sweeping all the time, so that the sweep is too.
keyValueContract(
  'InMemoryKeyValueStore, lazy expiry',
  async () => new InMemoryKeyValueStore({ sweepIntervalMs: 3_600_000 }),
  { available: true },
);
keyValueContract(
  'InMemoryKeyValueStore, sweeping every 5 ms',
  async () => new InMemoryKeyValueStore({ sweepIntervalMs: 5 }),
  { available: true },
);

describe('InMemoryKeyValueStore left open', () => {
  it('does not keep the process alive', async () => {
    const repository = resolve(__dirname, '../../../..');
    const script = `
      const { InMemoryKeyValueStore } = require(${JSON.stringify(resolve(__dirname, 'in-memory-key-value-store.ts'))});
      new InMemoryKeyValueStore({ sweepIntervalMs: 10 }).set('k', 'v', { ttlMs: 60000 });
    `;
    const child = spawn(process.execPath, ['-r', resolve(repository, 'scripts/register.cjs'), '-e', script], {
      cwd: repository,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((done) => {
      const timer = setTimeout(() => {
        child.kill();
        done(null);
      }, 10_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        done(code);
      });
    });
    expect({ exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
  });
});
