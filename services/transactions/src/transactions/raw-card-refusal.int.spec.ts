/**
 * Issue 19 item 4: the distributed runtime's transactions process is outside the card data environment and takes no
 * card number (`cardDataByHandOverOnly`, set by its main.ts): a create request that still carries one (a caller other
 * than the gateway, which hands the card to the vault first) is refused with a 400 naming the field, and nothing is
 * stored, in the vault or here. In process (the option off) the same request pays: the card goes to the vault at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError } from '@switchyard/api';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import { SqliteEventStore } from '@switchyard/eventstore';
import { VaultService } from '@switchyard/vault';
import { TransactionsService } from '../transactions-service';

const account = 'shop-raw-card';
const webhookSecret = 'whsec_test_0123456789';

let dir: string;
let stores: SqliteEventStore[];
let simulator: RunningSimulator;
let running: TransactionsService[];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-raw-card-'));
  simulator = await startSimulator({ webhookSecret });
  stores = [];
  running = [];
});

afterEach(async () => {
  for (const service of running) await service.stop();
  await simulator.stop();
  for (const store of stores) await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function compose(cardDataByHandOverOnly: boolean) {
  const name = cardDataByHandOverOnly ? 'distributed' : 'embedded';
  const store = new SqliteEventStore(path.join(dir, `${name}-transactions.db`));
  const vaultStore = new SqliteEventStore(path.join(dir, `${name}-vault.db`));
  stores.push(store, vaultStore);
  const vault = new VaultService({ store: vaultStore, db: vaultStore.database, vaultKey: Buffer.alloc(32, 7) });
  const service = new TransactionsService({
    store,
    db: store.database,
    vault,
    cardDataByHandOverOnly,
    providers: { publicBaseUrl: () => 'http://127.0.0.1:9', mockCard: { baseUrl: simulator.url, webhookSecret } },
  });
  running.push(service);
  await service.catchUp();
  await service.paymentServices.create(account, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  } as never);
  const cards = () =>
    (vaultStore.database.prepare('SELECT count(*) AS n FROM vault_cards').get() as { n: number } | undefined)?.n ?? 0;
  const transactions = () =>
    (
      store.database.prepare("SELECT count(*) AS n FROM events WHERE stream_id LIKE 'transaction-%'").get() as {
        n: number;
      }
    ).n;
  return { service, cards, transactions };
}

const rawCard = (service: TransactionsService) =>
  service.transactions.create({
    merchant_account_id: account,
    body: {
      amount: 1_000,
      currency: 'USD',
      intent: 'authorize',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      store: false,
      merchant_initiated: false,
      is_subsequent_payment: false,
      is_amount_estimated: false,
    } as never,
  });

it('refuses a card number that did not come through the gateway’s hand-over, storing nothing', async () => {
  const { service, cards, transactions } = await compose(true);
  const refused = await rawCard(service).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(ApiError);
  expect((refused as ApiError).toBody()).toMatchObject({
    status: 400,
    details: [{ pointer: '/payment_method/number', type: 'card_data_not_handed_over' }],
  });
  expect(cards()).toBe(0);
  expect(transactions()).toBe(0);
});

it('in process, without the option, takes the same card into the vault and pays', async () => {
  const { service, cards } = await compose(false);
  const paid = (await rawCard(service)) as { status: string };
  expect(paid).toMatchObject({ status: 'authorization_succeeded' });
  expect(cards()).toBe(1);
});
