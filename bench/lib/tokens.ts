/**
 * ES512 access tokens for the benchmarks, signed with node:crypto the way clients of the API sign them (header
 * `{alg: ES512, typ: JWT, kid}`, claims `scopes`, `iat`, `nbf`, `exp`, `jti`).
 *
 * `TokenPool` pre-signs tokens in worker threads (one per core) BEFORE a measured window, so that signing does not
 * take the CPU being measured; the load then takes one unused token per request (`auth-fresh`).
 */
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';

export interface SigningKey {
  readonly kid: string;
  readonly privateKeyPem: string;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** One ES512 token, signed on the calling thread (about 3 ms of CPU for P-521). */
export function signEs512Token(key: SigningKey, scopes: readonly string[], expiresInSeconds = 3600): string {
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'ES512', typ: 'JWT', kid: key.kid })}.${b64({ scopes, iat: now, nbf: now, exp: now + expiresInSeconds, jti: randomUUID() })}`;
  const signature = sign('sha512', Buffer.from(input), {
    key: createPrivateKey(key.privateKeyPem),
    dsaEncoding: 'ieee-p1363',
  });
  return `${input}.${signature.toString('base64url')}`;
}

// Plain JavaScript (eval'd): a worker thread needs no TypeScript loader.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPrivateKey, randomUUID, sign } = require('node:crypto');
const key = createPrivateKey(workerData.privateKeyPem);
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
parentPort.on('message', (count) => {
  const tokens = [];
  for (let i = 0; i < count; i += 1) {
    const now = Math.floor(Date.now() / 1000);
    const input = b64({ alg: 'ES512', typ: 'JWT', kid: workerData.kid }) + '.' +
      b64({ scopes: workerData.scopes, iat: now, nbf: now, exp: now + workerData.expiresIn, jti: randomUUID() });
    tokens.push(input + '.' + sign('sha512', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url'));
  }
  parentPort.postMessage(tokens);
});
`;

/** Unused tokens, each signed once; `take()` never hands the same token out twice. */
export class TokenPool {
  private readonly tokens: string[] = [];
  private readonly workers: Worker[];
  /** Tokens that had to be signed on the main thread because the pool ran dry (should stay 0). */
  signedInline = 0;

  constructor(
    private readonly key: SigningKey,
    private readonly scopes: readonly string[],
    private readonly expiresInSeconds = 3600,
    threads = Math.max(1, cpus().length),
  ) {
    this.workers = Array.from(
      { length: threads },
      () =>
        new Worker(workerSource, {
          eval: true,
          workerData: { privateKeyPem: key.privateKeyPem, kid: key.kid, scopes, expiresIn: expiresInSeconds },
        }),
    );
  }

  get size(): number {
    return this.tokens.length;
  }

  /** Signs until the pool holds at least `count` unused tokens (all worker threads in parallel). */
  async fill(count: number): Promise<void> {
    const missing = count - this.tokens.length;
    if (missing <= 0) return;
    const share = Math.ceil(missing / this.workers.length);
    const batches = await Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<string[]>((resolve, reject) => {
            worker.once('message', resolve);
            worker.once('error', reject);
            worker.postMessage(share);
          }),
      ),
    );
    for (const batch of batches) this.tokens.push(...batch);
  }

  take(): string {
    const token = this.tokens.pop();
    if (token !== undefined) return token;
    this.signedInline += 1;
    return signEs512Token(this.key, this.scopes, this.expiresInSeconds);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

/**
 * The raw ES512 rate's worker (eval'd): `workerData` `{ publicKeyPem, token }`; on `{ warmupMs, ms }` it checks the
 * token's signature back to back with node:crypto (signature only) and posts `{ count, elapsedMs }`.
 */
export const RAW_ES512_VERIFY_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const key = createPublicKey(workerData.publicKeyPem);
const [header, payload, signature] = workerData.token.split('.');
const input = Buffer.from(header + '.' + payload);
const sig = Buffer.from(signature, 'base64url');
const run = (until) => { let n = 0; while (performance.now() < until) { if (!verify('sha512', input, { key, dsaEncoding: 'ieee-p1363' }, sig)) throw new Error('bad signature'); n += 1; } return n; };
parentPort.once('message', ({ warmupMs, ms }) => {
  run(performance.now() + warmupMs);
  const start = performance.now();
  const count = run(start + ms);
  parentPort.postMessage({ count, elapsedMs: performance.now() - start });
});
`;
