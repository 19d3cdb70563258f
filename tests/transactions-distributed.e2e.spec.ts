/**
 * Transactions through the distributed runtime (issue 4's acceptance items with the services as separate
 * processes): two gateways, identity, transactions and the mock-card simulator, each its own OS process.
 *
 * - The money limits hold when 50 requests race through two gateway processes to one transactions process:
 *   of 50 refunds of $60 against $100 captured exactly one succeeds; of 50 captures of $30 against an
 *   authorization of $100 (multiple captures on) exactly three do.
 * - No full card number is anywhere a run leaves traces: every file under DATA_DIR (bytes, WAL files included),
 *   every process's stdout and stderr, every message on `transactions.events` and `identity.events`.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { transactionsTopic } from '@switchyard/contracts';
import { describeWithInfra, signToken, waitFor } from '@switchyard/testing';
import {
  distributedInfrastructure,
  readTopics,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
  type TopicMessage,
} from './distributed.fixture';

const infrastructure = await distributedInfrastructure();

const identityTopic = 'identity.events';
const merchantHeader = 'x-service-merchant-account-id';
/** The test PANs this file sends; none of them may be stored, logged or published in full. */
const pans = { visa: '4111111111111111', mastercard: '5555555555554444', amex: '378282246310005' } as const;

interface Answer {
  readonly status: number;
  /** The parsed JSON (a string when it is not JSON). */
  readonly body: any;
  readonly text: string;
  readonly via: string;
}

const card = (amount: number, number: string, intent: 'authorize' | 'capture') => ({
  amount,
  currency: 'USD',
  payment_method: { method: 'card', number, expiration_date: '12/30', security_code: '123' },
  intent,
});

const tally = (answers: readonly Answer[]): Record<number, number> =>
  answers.reduce<Record<number, number>>(
    (counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }),
    {},
  );

/** Where (and in which encoding) each PAN occurs in `bytes`; empty when nowhere. */
function panHits(where: string, bytes: Buffer): string[] {
  const hits: string[] = [];
  for (const pan of Object.values(pans)) {
    for (const encoding of ['latin1', 'utf16le'] as const) {
      const at = bytes.indexOf(Buffer.from(pan, encoding));
      if (at >= 0) hits.push(`${where}: ${pan} (${encoding === 'latin1' ? 'ASCII/UTF-8' : 'UTF-16LE'}) at byte ${at}`);
    }
  }
  return hits;
}

/** Every file under `dir`, recursively, with its bytes. */
function filesUnder(dir: string): { file: string; bytes: Buffer }[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((entry) => {
    if (!entry.isFile()) return [];
    const file = path.join(entry.parentPath, entry.name);
    return [{ file: path.relative(dir, file), bytes: fs.readFileSync(file) }];
  });
}

const messageBytes = (message: TopicMessage): Buffer =>
  Buffer.concat([
    message.key ?? Buffer.alloc(0),
    message.value ?? Buffer.alloc(0),
    ...Object.entries(message.headers).flatMap(([name, value]) => [
      Buffer.from(name),
      ...(Array.isArray(value) ? value : [value]).map((v) => (v === undefined ? Buffer.alloc(0) : Buffer.from(v))),
    ]),
  ]);

const eventOf = (message: TopicMessage) =>
  JSON.parse(message.value?.toString() ?? '{}') as { type: string; stream_id: string; data: Record<string, unknown> };

describeWithInfra(
  'transactions through the distributed runtime: two gateways, identity, transactions and the simulator as separate processes',
  infrastructure,
  () => {
    const merchantAccountId = `tx-e2e-${randomBytes(4).toString('hex')}`;
    let runtime: DistributedRuntime;
    let key: ApiKey;
    /** Every HTTP response body of the file: scanned for PANs as well. */
    const responses: string[] = [];
    /** Every transaction this file created. */
    const transactionIds: string[] = [];

    const token = () => signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 300 });

    async function send(
      url: string,
      method: string,
      route: string,
      body?: unknown,
      options: { token?: string; headers?: Record<string, string> } = {},
    ): Promise<Answer> {
      const response = await fetch(`${url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${options.token ?? (await token())}`,
          [merchantHeader]: merchantAccountId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      responses.push(text);
      let parsed: unknown = null;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed, text, via: url };
    }

    async function createTransaction(
      amount: number,
      pan: string,
      intent: 'authorize' | 'capture',
      headers: Record<string, string> = {},
    ) {
      const created = await send(runtime.baseUrl, 'POST', '/transactions', card(amount, pan, intent), { headers });
      expect(created.status, created.text).toBe(201);
      transactionIds.push(created.body.id);
      return created.body as {
        id: string;
        status: string;
        authorized_amount: number;
        captured_amount: number;
        refunded_amount: number;
      };
    }

    /** `count` identical POSTs fired at once, alternating between the two gateways (one token, signed beforehand). */
    async function race(count: number, route: string, body: unknown): Promise<Answer[]> {
      const bearer = await token();
      return Promise.all(
        Array.from({ length: count }, (_, i) =>
          send(i % 2 === 0 ? runtime.baseUrl : runtime.secondUrl, 'POST', route, body, { token: bearer }),
        ),
      );
    }

    const ledger = async (reference: string) =>
      (await fetch(`${runtime.simulatorUrl}/v1/ledger?reference=${reference}`)).json() as Promise<
        Record<string, number>
      >;

    beforeAll(async () => {
      // trace: the most the services ever log, so the log scan below sees everything they could write.
      runtime = await startDistributedRuntime({ name: 'transactions-distributed', logLevel: 'trace', mockCard: true });
      key = await runtime.createApiKey('transactions-e2e', ['administrator']);
      for (const url of [runtime.baseUrl, runtime.secondUrl]) {
        await waitFor(
          `the new key accepted by ${url}`,
          async () => ((await send(url, 'GET', '/merchant-accounts')).status === 200 ? true : undefined),
          10_000,
          runtime.describe,
        );
      }
      const account = await send(runtime.baseUrl, 'POST', '/merchant-accounts', {
        id: merchantAccountId,
        display_name: 'Transactions e2e',
        multiple_captures_enabled: true,
      });
      expect(account.status, account.text).toBe(201);
      const connection = await send(runtime.baseUrl, 'POST', '/payment-services', {
        display_name: 'Card simulator',
        payment_service_definition_id: 'mock-card',
        fields: [{ key: 'merchant_id', value: 'm' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      });
      expect(connection.status, connection.text).toBe(201);
    });

    afterAll(() => runtime?.stop());

    it('of 50 concurrent $60 refunds of a $100 capture, through both gateways, exactly one succeeds', async () => {
      const t = await createTransaction(10_000, pans.visa, 'capture');
      expect(t).toMatchObject({ status: 'capture_succeeded', captured_amount: 10_000, refunded_amount: 0 });

      const answers = await race(50, `/transactions/${t.id}/refunds`, { amount: 6_000 });

      expect(
        tally(answers),
        answers
          .filter((a) => a.status !== 400)
          .map((a) => `${a.status} ${a.text}`)
          .join('\n'),
      ).toEqual({ 201: 1, 400: 49 });
      expect(new Set(answers.map((a) => a.via))).toEqual(new Set([runtime.baseUrl, runtime.secondUrl]));
      const [winner] = answers.filter((a) => a.status === 201);
      expect(winner?.body).toMatchObject({ type: 'refund', amount: 6_000, status: 'succeeded', transaction_id: t.id });
      for (const refused of answers.filter((a) => a.status === 400)) {
        expect(refused.body).toMatchObject({
          type: 'error',
          code: 'bad_request',
          status: 400,
          details: [expect.objectContaining({ type: 'refund_limit_exceeded' })],
        });
      }

      const refunds = await send(runtime.secondUrl, 'GET', `/transactions/${t.id}/refunds`);
      expect(refunds.body.items).toEqual([
        expect.objectContaining({ id: winner?.body.id, amount: 6_000, status: 'succeeded' }),
      ]);
      expect((await send(runtime.secondUrl, 'GET', `/transactions/${t.id}`)).body).toMatchObject({
        captured_amount: 10_000,
        refunded_amount: 6_000,
      });
      // Only the winner reached the provider.
      expect(await ledger(t.id)).toMatchObject({ authorizations: 1, refunds: 1 });
    });

    it('of 50 concurrent $30 captures of a $100 authorization (multiple captures on), through both gateways, exactly three succeed', async () => {
      const t = await createTransaction(10_000, pans.mastercard, 'authorize');
      expect(t).toMatchObject({ status: 'authorization_succeeded', authorized_amount: 10_000, captured_amount: 0 });

      const answers = await race(50, `/transactions/${t.id}/capture`, { amount: 3_000 });

      expect(
        tally(answers),
        answers
          .filter((a) => a.status !== 400)
          .map((a) => `${a.status} ${a.text}`)
          .join('\n'),
      ).toEqual({ 200: 3, 400: 47 });
      expect(new Set(answers.map((a) => a.via))).toEqual(new Set([runtime.baseUrl, runtime.secondUrl]));
      for (const refused of answers.filter((a) => a.status === 400)) {
        expect(refused.body).toMatchObject({
          type: 'error',
          code: 'bad_request',
          status: 400,
          details: [expect.objectContaining({ type: 'capture_limit_exceeded' })],
        });
      }

      const captures = await send(runtime.secondUrl, 'GET', `/transactions/${t.id}/captures`);
      expect(captures.body.items).toHaveLength(3);
      for (const capture of captures.body.items) expect(capture).toMatchObject({ amount: 3_000, status: 'succeeded' });
      expect((await send(runtime.secondUrl, 'GET', `/transactions/${t.id}`)).body).toMatchObject({
        authorized_amount: 10_000,
        captured_amount: 9_000,
      });
      expect(await ledger(t.id)).toMatchObject({ authorizations: 1, captures: 3 });
    });

    it('answers 404 for a transaction of a merchant account that does not exist (identity asked over RPC), and pays for a known one (issue 22, item 12)', async () => {
      const ghost = { [merchantHeader]: `ghost-${randomBytes(4).toString('hex')}` };
      // A connection recorded under the unknown id, where the gateway lets one be: the transaction still is refused.
      await send(
        runtime.baseUrl,
        'POST',
        '/payment-services',
        {
          display_name: 'Cards',
          payment_service_definition_id: 'mock-card',
          fields: [{ key: 'merchant_id', value: 'g' }],
          accepted_currencies: ['USD'],
          accepted_countries: ['US'],
        },
        { headers: ghost },
      );
      for (const url of [runtime.baseUrl, runtime.secondUrl]) {
        const refused = await send(url, 'POST', '/transactions', card(1_000, pans.visa, 'authorize'), {
          headers: ghost,
        });
        expect(refused.status, refused.text).toBe(404);
        expect(refused.body).toMatchObject({ type: 'error', code: 'not_found', status: 404 });
      }
      expect((await createTransaction(1_000, pans.visa, 'authorize')).status).toBe('authorization_succeeded');
    });

    it('leaves no full card number in the data directory, the logs or any Kafka message', async () => {
      // Cards in every flow the service has: authorize and capture at once, later captures, partial and full
      // refunds, a void, a decline, an idempotent create, and a request refused by validation with a card in it.
      const first = await createTransaction(1_234, pans.visa, 'capture');
      const partial = await send(runtime.baseUrl, 'POST', `/transactions/${first.id}/refunds`, { amount: 500 });
      expect(partial.status, partial.text).toBe(201);
      const rest = await send(runtime.secondUrl, 'POST', `/transactions/${first.id}/refunds/all`, {});
      expect(rest.status, rest.text).toBe(201);

      const voided = await createTransaction(777, pans.amex, 'authorize');
      expect((await send(runtime.secondUrl, 'POST', `/transactions/${voided.id}/void`, {})).status).toBe(200);

      const declined = await createTransaction(200_012, pans.visa, 'authorize'); // the simulator's issuer_decline
      expect(declined.status).toBe('authorization_declined');

      const refusedCard = { ...card(1_000, pans.mastercard, 'authorize').payment_method, expiration_date: '13/30' };
      const invalid = await send(runtime.baseUrl, 'POST', '/transactions', {
        ...card(1_000, pans.mastercard, 'authorize'),
        payment_method: refusedCard,
      });
      expect(invalid.status, invalid.text).toBe(422); // validation

      const idempotencyKey = { 'idempotency-key': `pan-scan-${randomBytes(4).toString('hex')}` };
      const second = await createTransaction(5_000, pans.mastercard, 'authorize', idempotencyKey);
      const replay = await send(runtime.secondUrl, 'POST', '/transactions', card(5_000, pans.mastercard, 'authorize'), {
        headers: idempotencyKey,
      });
      expect(replay.body.id).toBe(second.id);
      expect(
        (await send(runtime.secondUrl, 'POST', `/transactions/${second.id}/capture`, { amount: 2_000 })).status,
      ).toBe(200);
      expect(
        (await send(runtime.baseUrl, 'POST', `/transactions/${second.id}/capture`, { amount: 1_000, final: true }))
          .status,
      ).toBe(200);
      const last = await send(runtime.baseUrl, 'POST', `/transactions/${second.id}/refunds`, { amount: 2_500 });
      expect(last.status, last.text).toBe(201);
      expect(last.body).toMatchObject({ status: 'succeeded' });

      const hits: string[] = [];
      // The detector itself finds a planted number, in either encoding.
      expect(panHits('probe', Buffer.from(`{"n":"${pans.amex}"}`))).toHaveLength(1);
      expect(panHits('probe', Buffer.from(pans.visa, 'utf16le'))).toHaveLength(1);

      // Kafka: from the beginning of both topics until the relay published this test's last event (the events are
      // relayed in log order), then on to the end offsets.
      const lastRefundRelayed = (messages: readonly TopicMessage[]) =>
        messages.some(
          (m) =>
            m.topic === transactionsTopic &&
            eventOf(m).type === 'RefundSucceeded' &&
            eventOf(m).data.refundId === last.body.id,
        );
      const messages = await readTopics([transactionsTopic, identityTopic], {
        until: lastRefundRelayed,
        timeoutMs: 60_000,
      });
      for (const message of messages)
        hits.push(
          ...panHits(`${message.topic} partition ${message.partition} offset ${message.offset}`, messageBytes(message)),
        );
      const transactionEvents = messages.filter((m) => m.topic === transactionsTopic).map(eventOf);
      const identityEvents = messages.filter((m) => m.topic === identityTopic).map(eventOf);
      const ofThisRun = transactionEvents.filter((event) =>
        transactionIds.some((id) => event.stream_id === `transaction-${id}`),
      );
      expect(new Set(ofThisRun.map((event) => event.stream_id))).toEqual(
        new Set(transactionIds.map((id) => `transaction-${id}`)),
      );
      expect(ofThisRun.length).toBeGreaterThanOrEqual(30);
      expect(ofThisRun.map((event) => event.type)).toEqual(
        expect.arrayContaining([
          'TransactionCreated',
          'AuthorizationSucceeded',
          'CaptureSucceeded',
          'RefundSucceeded',
          'VoidSucceeded',
          'AuthorizationDeclined',
        ]),
      );
      expect(
        identityEvents.filter((event) => event.type === 'ApiKeyPairCreated' && event.data.id === key.id),
      ).toHaveLength(1);
      expect(
        identityEvents.some((event) => event.type === 'MerchantAccountCreated' && event.data.id === merchantAccountId),
      ).toBe(true);

      // The data directory while the processes run: SQLite's -wal and -shm files are there too.
      const running = filesUnder(runtime.dataDir);
      for (const { file, bytes } of running) hits.push(...panHits(`${file} (running)`, bytes));
      const names = running.map(({ file }) => file);
      expect(names).toEqual(
        expect.arrayContaining(['transactions.db', 'transactions.db-wal', 'identity.db', 'vault.key']),
      );
      const transactionsBytes = Buffer.concat(
        running.filter(({ file }) => file.startsWith('transactions.db')).map(({ bytes }) => bytes),
      );
      for (const id of transactionIds)
        expect(transactionsBytes.includes(Buffer.from(id)), `transaction ${id} in the transactions database`).toBe(
          true,
        );

      // Stopped (SQLite checkpoints its WAL into the database on close): the data directory again, and the logs,
      // complete now.
      await runtime.stopProcesses();
      for (const [name, process] of Object.entries(runtime.processes))
        expect(process.child.exitCode, `${name} exit code`).toBe(0);
      const stopped = filesUnder(runtime.dataDir);
      for (const { file, bytes } of stopped) hits.push(...panHits(`${file} (stopped)`, bytes));
      expect(stopped.find(({ file }) => file === 'transactions.db')?.bytes.length).toBeGreaterThan(0);

      for (const [name, process] of Object.entries(runtime.processes))
        hits.push(...panHits(`${name} stdout+stderr`, Buffer.from(process.output())));
      hits.push(...panHits('operator CLI output', Buffer.from(runtime.cliOutput())));
      hits.push(...responses.flatMap((body, index) => panHits(`HTTP response ${index}`, Buffer.from(body))));
      expect(runtime.processes.transactions?.output()).toContain('transactions service listening');
      expect(runtime.processes.gateway?.output()).toContain('gateway listening');
      expect(runtime.processes.simulator?.output()).toContain('mock-card simulator listening');

      console.log(
        `PAN scan: ${running.length + stopped.length} data files (${running.map(({ file, bytes }) => `${file} ${bytes.length} B`).join(', ')}), ` +
          `${Object.keys(runtime.processes).length} process logs (${Object.values(runtime.processes).reduce((sum, p) => sum + p.output().length, 0)} chars), ` +
          `${transactionEvents.length} messages on ${transactionsTopic} (${ofThisRun.length} of this run's transactions), ${identityEvents.length} on ${identityTopic}, ${responses.length} HTTP responses`,
      );
      expect(hits).toEqual([]);
    });
  },
);
