/** `read-models rebuild` while the embedded runtime takes payments: the same read model, no request failing. */
import Database from 'better-sqlite3';
import { SqliteEventStore } from '@switchyard/eventstore';
import { Projector } from '@switchyard/readmodel';
import { startHarness, type Harness } from '@switchyard/standalone/src/transactions.harness';
import { runCli } from '@switchyard/testing';
import { isBehind, projectionsOf, readModelTables } from './read-models';

describe('the read models the rebuild knows', () => {
  it.each(Object.keys(readModelTables))('are every read model %s makes, with their tables', (service) => {
    const db = new Database(':memory:');
    const store = new SqliteEventStore(':memory:');
    const projections = projectionsOf(service, store, db);
    expect([...projections.keys()].sort()).toEqual(Object.keys(readModelTables[service]!).sort());
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map(
        (row) => row.name,
      ),
    );
    for (const owned of Object.values(readModelTables[service]!).flat()) expect(tables.has(owned), owned).toBe(true);
    db.close();
  });

  it('compares positions of both stores', () => {
    expect([
      isBehind('9', '10'),
      isBehind('10', '9'),
      isBehind(undefined, '1'),
      isBehind('1', undefined),
      isBehind('5/5', '5/6'),
      isBehind('6/0', '5/9'),
    ]).toEqual([true, false, true, false, true, false]);
  });
});

describe('read-models rebuild under load', { timeout: 120_000 }, () => {
  let harness: Harness;
  afterEach(async () => harness?.stop());

  it('rebuilds the transactions read models while payments go on: the same read model as a fresh fold, a lost row back, no request failing', async () => {
    harness = await startHarness('rebuild');
    await harness.createConnection('default');
    const before: Array<{ id: string }> = [];
    for (let n = 0; n < 20; n += 1) before.push(await harness.authorize('default', { amount: 1_000 + n }));
    const snapshot = await Promise.all(before.map((transaction) => harness.get('default', transaction.id)));
    const dataDir = harness.fixture.dataDir;
    // A damaged read model: a row lost (the rebuild's reason to be).
    const other = new Database(`${dataDir}/transactions.db`);
    other.pragma('busy_timeout = 5000');
    other.prepare('DELETE FROM transactions WHERE id = ?').run(before[0]!.id);
    other.close();
    await harness.http().get(`/transactions/${before[0]!.id}`).set(harness.headers('default')).expect(404);

    let loading = true;
    const failures: string[] = [];
    const created: string[] = [];
    const worker = async () => {
      for (let n = 0; loading; n += 1) {
        const response = await harness
          .http()
          .post('/transactions')
          .set(harness.headers('default'))
          .send({
            amount: 2_000 + n,
            currency: 'USD',
            payment_method: {
              method: 'card',
              number: '4111111111111111',
              expiration_date: '11/30',
              security_code: '123',
            },
          });
        if (response.status !== 201) failures.push(`POST ${response.status} ${response.text}`);
        else created.push(response.body.id);
        const read = await harness
          .http()
          .get(`/transactions/${before[n % before.length]!.id}`)
          .set(harness.headers('default'));
        if (read.status !== 200 && !(n % before.length === 0 && read.status === 404))
          failures.push(`GET ${read.status}`);
      }
    };
    const workers = [worker(), worker()];
    const rebuild = await runCli({ DATA_DIR: dataDir }, 'read-models', 'rebuild', 'transactions');
    await new Promise((resolve) => setTimeout(resolve, 300)); // the load goes on after the swap too
    loading = false;
    await Promise.all(workers);

    expect(rebuild.code, rebuild.stderr).toBe(0);
    const outcome = JSON.parse(rebuild.stdout);
    expect(outcome.read_models).toEqual(Object.keys(readModelTables.transactions!));
    expect(outcome.events_replayed).toBeGreaterThan(0);
    expect(rebuild.stderr).toMatch(/events replayed/);
    expect(rebuild.stderr).toMatch(/swapped in \d+ ms/);
    expect(failures).toEqual([]);
    expect(created.length).toBeGreaterThan(0);

    // Every transaction answers as before (the lost one too), and those made during the rebuild are there.
    await harness.fixture.service.transactions.catchUp();
    expect(await Promise.all(before.map((transaction) => harness.get('default', transaction.id)))).toEqual(snapshot);
    for (const id of created) await harness.get('default', id);

    // Table by table, the live read model is what a fresh fold of the whole log makes.
    const live = harness.fixture.service.transactions;
    await live.catchUp();
    const liveDb = new Database(`${dataDir}/transactions.db`, { readonly: true });
    const fresh = new Database(':memory:');
    const store = new SqliteEventStore(`${dataDir}/transactions.db`);
    const projections = projectionsOf('transactions', store, fresh);
    await new Projector(fresh, store, [...projections.values()]).catchUp();
    const rows = (db: Database.Database, table: string) =>
      (db.prepare(`SELECT * FROM "${table}"`).all() as unknown[]).map((row) => JSON.stringify(row)).sort();
    for (const table of Object.values(readModelTables.transactions!).flat())
      expect(rows(liveDb, table), table).toEqual(rows(fresh, table));
    liveDb.close();
    fresh.close();
    await store.close();
  });
});
