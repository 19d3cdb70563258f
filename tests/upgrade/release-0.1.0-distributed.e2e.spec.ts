/**
 * Issue 19 item 8 in the distributed runtime: the six processes start on a copy of the data directory release 0.1.0
 * wrote (tests/fixtures/release-0.1.0: every kind of resource; then every service in one process, the vault's streams
 * and card rows in transactions.db). The vault's process moves them into its own store at its first start, the
 * transactions process waits for its keys, the gift cards process for the transactions process's; then every read
 * answers exactly as release 0.1.0 did — the stored payment methods' usage included, which the vault's process
 * follows on `transactions.events` but 0.1.0's payments never reached this broker.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describeWithInfra, signToken } from '@switchyard/testing';
import { distributedInfrastructure, startDistributedRuntime, type DistributedRuntime } from '../distributed.fixture';
import { answers, credentials, fixture, publicBaseUrl, withoutLastUse } from './release-0.1.0.fixture';

const infrastructure = await distributedInfrastructure();

describeWithInfra('release 0.1.0’s data directory under the distributed runtime', infrastructure, () => {
  let runtime: DistributedRuntime;
  let token: string;

  beforeAll(async () => {
    runtime = await startDistributedRuntime({
      name: 'upgrade-0.1.0-distributed',
      seed: path.join(fixture, 'data-dir'),
      env: { PUBLIC_BASE_URL: publicBaseUrl },
    });
    token = await signToken({
      kid: credentials.administrator.kid,
      privateKeyPem: credentials.administrator.private_key,
      expiresIn: 600,
    });
  }, 240_000);

  afterAll(async () => {
    await runtime?.stop();
  });

  it('moved the vault out of transactions.db: its own store holds the cards, the old file none', () => {
    const cards = (file: string) => {
      const db = new Database(path.join(runtime.dataDir, file), { readonly: true });
      try {
        const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vault_cards'").get();
        return table ? (db.prepare('SELECT count(*) AS n FROM vault_cards').get() as { n: number }).n : 0;
      } finally {
        db.close();
      }
    };
    expect(cards('vault.db')).toBeGreaterThan(0);
    expect(cards('transactions.db')).toBe(0);
    expect(runtime.processes.vault!.output()).not.toMatch(/"level":(50|60)/);
  });

  it('answers every read of every kind of resource as release 0.1.0 did', async () => {
    const differ: string[] = [];
    for (const answer of answers) {
      const response = await fetch(`${runtime.baseUrl}${answer.path}`, {
        headers: {
          authorization: `Bearer ${token}`,
          ...(answer.account ? { 'x-service-merchant-account-id': answer.account } : {}),
        },
      });
      const body = (await response.json()) as unknown;
      const same =
        response.status === answer.status && isDeepStrictEqual(withoutLastUse(body), withoutLastUse(answer.body));
      if (!same)
        differ.push(
          `${answer.account ?? '-'} ${answer.path}: ${response.status} ${JSON.stringify(body).slice(0, 600)}\n  was ${answer.status} ${JSON.stringify(answer.body).slice(0, 600)}`,
        );
    }
    expect(differ, differ.join('\n')).toEqual([]);
  }, 120_000);
});
