/**
 * Issue 19: card data stays inside the card data environment. After card payments of every kind through the
 * distributed runtime (a raw card, a stored card, a checkout session with card fields, 3-D Secure with a challenge,
 * split tender with a gift card), with a webhook subscription receiving their events, every process outside the
 * environment is searched for the test card numbers and security code values (libs/testing/src/card-data.ts): its
 * heap (a snapshot: libs/testing/src/heap-snapshots.ts), everything it logged (at `trace`), the data files it owns,
 * the webhook bodies it sent; so is every message of the runtime's Kafka topics (`*.events`). Each outside process
 * is first given a number of its own to hold, which the scan of its heap must find: a clean heap is not one the scan
 * could not read. Inside the environment, the vault's store keeps the cards only as ciphertext.
 *
 * Gift card numbers follow the same rule inside the gift cards service: the one given by number and PIN in the split
 * payment is searched for everywhere the card numbers are, except the gift cards process's heap (it redeems it); its
 * store keeps it only as ciphertext, erased once the redemption was answered.
 *
 * Heap snapshots are taken to the OS temp folder and deleted (never kept with a CI run's artifacts: the processes
 * inside hold card numbers); the planted numbers are made at run time, so no kept file or log holds a number of the
 * tree.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import Database from 'better-sqlite3';
import { kafkajs } from '@switchyard/bus/src/kafka/kafkajs';
import { webhookEventNames } from '@switchyard/contracts';
import {
  describeWithInfra,
  heapSnapshots,
  kafkaBrokersForTests,
  luhn,
  maskCardNumber,
  scanBytes,
  scanHeapSnapshot,
  scanText,
  signToken,
  testCardNumbers,
  waitFor,
  type CardDataFinding,
  type HeapSnapshots,
} from '@switchyard/testing';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import {
  distributedInfrastructure,
  readTopics,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
} from '../distributed.fixture';

// kafkajs as the services run it: without its idle check loop (libs/bus/src/kafka/kafkajs.ts).
const { Kafka, logLevel } = kafkajs();

const infrastructure = await distributedInfrastructure();

/**
 * The card data environment of the distributed runtime today: the processes allowed to hold a card number or a
 * security code, and the data files allowed to keep one (as ciphertext). Everything else the fixture starts, and
 * every other file of DATA_DIR, is outside and must be clean.
 * - `gateway`, `second-gateway`: receive raw cards (transactions, payment methods, checkout session fields).
 * - `vault`: the vault service's process (issue 19): the gateway's card hand-over, the cards' keys, and the
 *   forwarder that swaps the aliases back for the provider and the 3-D Secure directory run there. The transactions
 *   process is outside: it gets card ids, summaries and aliases only (services/transactions/src/vault-over-rpc.ts).
 * - The vault's store `vault.db` (the cards, sealed) and its key `vault.key`. `transactions.db` is outside: the
 *   vault's rows and streams moved out of it (services/vault/src/vault-storage.ts).
 * - `simulator`: the card provider's stand-in, not part of Switchyard.
 * Outside: `identity`, `transactions`, `webhooks`, `gift-cards`, and every other file of DATA_DIR.
 */
const cardDataEnvironment = {
  processes: new Set(['gateway', 'second-gateway', 'vault', 'simulator']),
  dataFiles: /^vault\.(db|key)/,
  /** The file of the vault's `vault_cards` (sealed card numbers). */
  vaultStore: 'vault.db',
};

/**
 * A Luhn-valid card number made now, so in no file of the tree: planted in a process it shows the scan finds what the
 * process holds, and it leaves nothing the CI scan of the run's artifacts (which knows only the tree's numbers) would
 * report.
 */
function plantedNumber(): string {
  const digits = `4${randomInt(10 ** 13, 10 ** 14)}`.padEnd(15, '0');
  return [...'0123456789'].map((check) => `${digits}${check}`).find(luhn) as string;
}

/** The simulator's 3-D Secure card that asks for a challenge (docs/simulator.md). */
const challengeCard = '4111111111181072';

describeWithInfra('card data isolation in the distributed runtime', infrastructure, () => {
  const account = `iso-e2e-${randomBytes(4).toString('hex')}`;
  const pans = testCardNumbers();
  /** The gift card numbers given in requests (made at run time): the gift cards service's alone. */
  const giftCardNumbers: string[] = [];
  const receiver = new WebhookReceiver();
  let snapshots: HeapSnapshots;
  let runtime: DistributedRuntime;
  let key: ApiKey;
  let outside: string[];

  async function send(method: string, route: string, body?: unknown) {
    const response = await fetch(`${runtime.baseUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 300 })}`,
        'x-service-merchant-account-id': account,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text), text };
  }
  const card = (number: string, securityCode: string) => ({
    method: 'card',
    number,
    expiration_date: '12/30',
    security_code: securityCode,
  });
  const pay = async (body: Record<string, unknown>, status = 'capture_succeeded') => {
    const paid = await send('POST', '/transactions', { amount: 1_000, currency: 'USD', intent: 'capture', ...body });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body.status, paid.text).toBe(status);
    return paid.body as { id: string; payment_method: { approval_url?: string } };
  };

  beforeAll(async () => {
    snapshots = heapSnapshots();
    await receiver.up();
    runtime = await startDistributedRuntime({
      name: 'card-isolation',
      mockCard: true,
      // The most the services ever log, so the log scan sees everything they could write.
      logLevel: 'trace',
      env: snapshots.env,
    });
    outside = Object.keys(runtime.processes).filter((name) => !cardDataEnvironment.processes.has(name));
    key = await runtime.createApiKey('card-isolation-e2e', ['administrator']);
    await waitFor(
      'the new key accepted',
      async () => ((await send('GET', '/merchant-accounts')).status === 200 ? true : undefined),
      10_000,
      runtime.describe,
    );
    const created = await send('POST', '/merchant-accounts', { id: account, display_name: 'Card isolation e2e' });
    expect(created.status, created.text).toBe(201);
    const threeDs = await send('POST', `/merchant-accounts/${account}/three-ds-configurations`, {
      merchant_acquirer_bin: '400000',
      merchant_acquirer_id: `acq-${account}`,
      merchant_name: 'Switchyard Test Shop',
      merchant_country_code: 'GB',
      merchant_category_code: '5999',
      merchant_url: 'https://shop.example',
    });
    expect(threeDs.status, threeDs.text).toBe(201);
    for (const [name, definition, extra] of [
      ['Cards', 'mock-card', { three_d_secure_enabled: true }],
      ['Gift cards', 'mock-gift-card', {}],
    ] as const) {
      const connection = await send('POST', '/payment-services', {
        display_name: name,
        payment_service_definition_id: definition,
        fields: [{ key: 'merchant_id', value: 'm' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
        ...extra,
      });
      expect(connection.status, connection.text).toBe(201);
    }
    const subscription = await send('POST', '/webhook-subscriptions', {
      url: receiver.url,
      merchant_account_id: account,
      event_names: webhookEventNames.filter((name) => !name.startsWith('api-key-pair.')),
      description: 'card isolation e2e',
    });
    expect(subscription.status, subscription.text).toBe(201);
  }, 240_000);

  afterAll(async () => {
    await runtime?.stop();
    await receiver.down();
    snapshots?.remove();
  });

  it('takes card payments of every kind', async () => {
    // A raw card.
    await pay({ payment_method: card('4111111111111111', '123') });

    // A stored card, then paid with by its id.
    const stored = await send('POST', '/payment-methods', card('5555555555554444', '456'));
    expect(stored.status, stored.text).toBe(201);
    await pay({ payment_method: { method: 'id', id: stored.body.id } });

    // A checkout session whose card fields the buyer's browser sent.
    const session = await send('POST', '/checkout/sessions', {});
    expect(session.status, session.text).toBe(201);
    const fields = await fetch(`${runtime.baseUrl}/checkout/sessions/${session.body.id}/fields`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payment_method: card('378282246310005', '7373') }),
    });
    expect(fields.status, await fields.text()).toBe(204);
    await pay({ payment_method: { method: 'checkout-session', id: session.body.id } });

    // 3-D Secure with a challenge: the buyer passes it on the simulator's ACS page and comes back.
    const challenged = await pay(
      { payment_method: { ...card(challengeCard, '100'), redirect_url: 'https://shop.example/return' } },
      'buyer_approval_pending',
    );
    const approvalUrl = challenged.payment_method.approval_url as string;
    const passed = await fetch(approvalUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'result=Y',
      redirect: 'manual',
    });
    expect(passed.status).toBe(303);
    const back = await fetch(passed.headers.get('location') as string, { redirect: 'manual' });
    expect(back.status).toBe(303);
    await waitFor(
      'the challenged payment captured',
      async () =>
        (await send('GET', `/transactions/${challenged.id}`)).body.status === 'capture_succeeded' || undefined,
      30_000,
      runtime.describe,
    );

    // Split tender: a gift card (its number and PIN in the request) and a card.
    const giftCard = `606061${String(Date.now() % 1_000_000).padStart(6, '0')}2222`;
    giftCardNumbers.push(giftCard);
    await pay({
      amount: 10_000,
      payment_method: card('4111111111111111', '321'),
      gift_cards: [{ number: giftCard, pin: '05000', amount: 2_500 }],
    });

    // The webhooks process rendered and sent their events.
    await waitFor('webhooks of the payments delivered', async () => receiver.requests.length >= 5 || undefined, 60_000);
  }, 120_000);

  it('leaves no card number or security code in the heap, logs or data files of a process outside the card data environment, in a webhook body or a Kafka message', async () => {
    expect(outside).toEqual(expect.arrayContaining(['identity', 'transactions', 'gift-cards', 'webhooks']));
    const findings: CardDataFinding[] = [];
    const scanned: string[] = [];
    expect(giftCardNumbers).toHaveLength(1);
    /** What no process but the gift cards service (and the card data environment) may hold. */
    const outsideGiftCards = [...pans, ...giftCardNumbers];

    // Each outside process is given a card number of its own to hold, known to the scan of its heap only: the scan
    // must find it there (so a clean heap is not one the scan could not read), and nothing else.
    const planted = new Map(outside.map((name) => [name, plantedNumber()]));
    const started = Date.now();
    const heaps = await Promise.all(
      outside.map(async (name) => {
        const running = runtime.processes[name]!;
        snapshots.plant(running, `kept by mistake: ${planted.get(name)}`);
        return { name, running, snapshot: await snapshots.take(running) };
      }),
    );
    scanned.push(`heap snapshots: ${Date.now() - started} ms`);
    for (const { name, running, snapshot } of heaps) {
      const scanStarted = Date.now();
      const inHeap: CardDataFinding[] = [];
      const number = planted.get(name) as string;
      const heap = scanHeapSnapshot(
        snapshot,
        `${name} heap`,
        [...(name === 'gift-cards' ? pans : outsideGiftCards), number],
        inHeap,
      );
      const plantFound = { where: `${name} heap (strings)`, what: `card number ${maskCardNumber(number)}` };
      expect(inHeap, `the number planted in ${name}`).toContainEqual(plantFound);
      findings.push(...inHeap.filter((finding) => !finding.what.includes(maskCardNumber(number))));
      scanned.push(
        `${name}: heap ${heap.strings.length} strings (${(fs.statSync(snapshot).size / 1e6).toFixed(1)} MB, scanned in ${Date.now() - scanStarted} ms, the planted number found)`,
      );
      fs.rmSync(snapshot);
      scanText(running.output(), `${name} log`, outsideGiftCards, findings);
      scanned.push(`${name}: log ${running.output().length} characters`);
    }

    const dataFiles = fs
      .readdirSync(runtime.dataDir, { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(runtime.dataDir, path.join(entry.parentPath, entry.name)))
      .filter((file) => !cardDataEnvironment.dataFiles.test(file));
    expect(dataFiles).toEqual(
      expect.arrayContaining(['identity.db', 'transactions.db', 'gift-cards.db', 'webhooks.db']),
    );
    for (const file of dataFiles)
      scanBytes(fs.readFileSync(path.join(runtime.dataDir, file)), file, outsideGiftCards, findings);
    scanned.push(`data files: ${dataFiles.join(', ')}`);

    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests)
      scanBytes(request.raw, `webhook ${request.webhookId}`, outsideGiftCards, findings);
    scanned.push(`webhook bodies: ${receiver.requests.length}`);

    const admin = new Kafka({ brokers: kafkaBrokersForTests(), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const topics = (await admin.listTopics()).filter((topic) => topic.endsWith('.events'));
    await admin.disconnect();
    const messages = await readTopics(topics, { timeoutMs: 60_000 });
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages)
      scanBytes(
        Buffer.concat([
          message.key ?? Buffer.alloc(0),
          message.value ?? Buffer.alloc(0),
          Buffer.from(JSON.stringify(message.headers)),
        ]),
        `kafka ${message.topic}/${message.partition}@${message.offset}`,
        outsideGiftCards,
        findings,
      );
    scanned.push(`kafka: ${messages.length} messages of ${topics.join(', ')}`);

    console.log(
      `card isolation scan: ${pans.length} test card numbers and ${giftCardNumbers.length} gift card number, ${findings.length} found\n  ${scanned.join('\n  ')}`,
    );
    expect(findings).toEqual([]);
  }, 180_000);

  it('keeps the cards inside the environment only as ciphertext: the vault rows, and no card number or security code in its data files', () => {
    const findings: CardDataFinding[] = [];
    const files = fs.readdirSync(runtime.dataDir).filter((file) => cardDataEnvironment.dataFiles.test(file));
    for (const file of files) scanBytes(fs.readFileSync(path.join(runtime.dataDir, file)), file, pans, findings);
    expect(findings).toEqual([]);

    const store = new Database(path.join(runtime.dataDir, cardDataEnvironment.vaultStore), { readonly: true });
    try {
      const sealed = store
        .prepare('SELECT length(pan_ciphertext) AS bytes FROM vault_cards WHERE merchant_account_id = ?')
        .all(account) as { bytes: number }[];
      // The stored card at least (one-off cards are shredded once their payment is done).
      expect(sealed.length).toBeGreaterThan(0);
      for (const { bytes } of sealed) expect(bytes).toBeGreaterThanOrEqual(13);
    } finally {
      store.close();
    }
  });
});
