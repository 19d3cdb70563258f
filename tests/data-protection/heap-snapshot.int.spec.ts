/**
 * The heap snapshot scan the isolation spec relies on (libs/testing/src/heap-snapshots.ts) finds card data however a
 * process holds it: in a flat string past V8's default 1,024-character truncation, split over the two halves of a
 * concatenated string, in a two-byte string, as a JS number, as a security code property, and what the preload is
 * given to hold (the isolation spec's plant); a process that holds none is clean. Each holder is a plain Node.js
 * process that gets the parts of the number from its environment, so the whole number exists only in the form
 * under test.
 */
import { spawn } from 'node:child_process';
import {
  heapSnapshots,
  maskCardNumber,
  scanHeapSnapshot,
  testCardNumbers,
  waitFor,
  type CardDataFinding,
  type HeapSnapshots,
  type RunningProcess,
} from '@switchyard/testing';

const pan = '4111111111111111';
const pans = testCardNumbers();
let snapshots: HeapSnapshots;
const running: RunningProcess[] = [];

beforeAll(() => {
  snapshots = heapSnapshots();
});
afterAll(async () => {
  await Promise.all(running.map((process) => process.kill()));
  snapshots.remove();
});

/** A Node.js process that keeps `globalThis.held = <expression>` (A and B: the two halves of the number). */
async function holder(expression: string): Promise<RunningProcess> {
  const script = `globalThis.held = ${expression}; console.log('holding'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, ...snapshots.env, A: pan.slice(0, 8), B: pan.slice(8), CODE: '737' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started: RunningProcess = {
    child,
    output: () => output,
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
  running.push(started);
  // The preload's SIGUSR2 handler is in place once the script runs (before, the signal would end the process).
  await waitFor(
    'the holder holding',
    async () => (output.includes('holding') ? true : undefined),
    10_000,
    () => output,
  );
  return started;
}

async function scan(process: RunningProcess): Promise<CardDataFinding[]> {
  const findings: CardDataFinding[] = [];
  scanHeapSnapshot(await snapshots.take(process), 'holder', pans, findings);
  return findings;
}

const cardFound = (findings: readonly CardDataFinding[], where: string) =>
  expect(findings).toContainEqual({ where: `holder (${where})`, what: `card number ${maskCardNumber(pan)}` });

it('finds the number in a flat string longer than 1,024 characters, at its end', async () => {
  const findings = await scan(await holder(`['x'.repeat(5000), process.env.A, process.env.B].join('')`));
  cardFound(findings, 'strings');
});

it('finds the number split over the two halves of a concatenated string (in no flat string)', async () => {
  const findings = await scan(await holder('[process.env.A + process.env.B]'));
  cardFound(findings, 'concatenated strings');
  expect(findings.filter((finding) => finding.where === 'holder (strings)')).toEqual([]);
});

it('finds the number in a two-byte string and held as a number', async () => {
  cardFound(await scan(await holder(`['é', process.env.A, process.env.B].join('')`)), 'strings');
  cardFound(await scan(await holder('Number(process.env.A + process.env.B) * 1')), 'strings');
});

it('finds a security code held as a property', async () => {
  const findings = await scan(await holder(`{ order: 1, ['security' + '_code']: process.env.CODE }`));
  expect(findings).toContainEqual({ where: 'holder (object property)', what: 'security code (security_code: •••)' });
});

it('finds what the preload is given to hold (the plant), and nothing in a process holding no card data', async () => {
  const clean = await holder(`'nothing: ' + process.env.A.slice(0, 4)`);
  expect(await scan(clean)).toEqual([]);
  snapshots.plant(clean, `planted ${pan}`);
  cardFound(await scan(clean), 'strings');
});
