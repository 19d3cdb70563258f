/**
 * The baseline for `auth-fresh` and `auth-reused`: the raw ES512 verification rate of this machine. One worker
 * thread per core (os.cpus().length) verifies the signature of one ES512 JWT with node:crypto `verify` (P-521,
 * SHA-512, IEEE P1363 encoding) back to back; prints `{"verificationsPerSecond", "workers", "durationMs", "cpuMs"}`
 * on stdout.
 *   node -r ./scripts/register.cjs bench/baselines/es512-rate.ts [--ms 3000] [--warmup-ms 500]
 */
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import { generateKeyPairSync } from 'node:crypto';
import { RAW_ES512_VERIFY_WORKER, signEs512Token } from '../lib/tokens';

const arg = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};

async function main(): Promise<void> {
  const ms = arg('--ms', 3000);
  const warmupMs = arg('--warmup-ms', 500);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const publicKeyPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const token = signEs512Token({ kid: 'bench', privateKeyPem }, ['*.read']);
  const workers = cpus().length;
  const results = await Promise.all(
    Array.from({ length: workers }, async () => {
      const worker = new Worker(RAW_ES512_VERIFY_WORKER, { eval: true, workerData: { publicKeyPem, token } });
      await new Promise((resolve) => worker.once('online', resolve));
      const result = await new Promise<{ count: number; elapsedMs: number }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage({ warmupMs, ms });
      });
      await worker.terminate();
      return result;
    }),
  );
  const verificationsPerSecond = results.reduce((sum, r) => sum + (r.count * 1000) / r.elapsedMs, 0);
  const usage = process.cpuUsage();
  // cpuMs: this process's CPU (all threads) since it started, so that the caller can tell what else ran meanwhile.
  process.stdout.write(
    `${JSON.stringify({ verificationsPerSecond, workers, durationMs: ms, cpuMs: (usage.user + usage.system) / 1000, perWorker: results })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
