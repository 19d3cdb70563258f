/**
 * The connector contract: what every connector must do to sit behind the port (`connector.ts`), as one suite a new
 * connector runs against its provider's local fake (or sandbox) with a few lines — see
 * docs/connectors/writing-a-connector.md. It asks only what the port promises, so it holds for every provider:
 *
 * - capabilities: the connection's are the definition's, and a capability turned off is refused as a value
 *   (`{outcome: 'refused'}`) before any call;
 * - the money path: authorize (manual capture) → capture → partial refund, then `sync` finds it by its ids (or,
 *   for a provider that cannot be asked, answers `unknown`);
 *   a void of an uncaptured authorization;
 * - business answers are values: a decline is `{outcome: 'declined', errorCode}`, never a throw;
 * - infrastructure trouble throws the port's classes: an unreachable provider is a retriable
 *   `ConnectorUnavailableError`; a notification that is not the provider's, or was altered, a
 *   `NotificationRejectedError`;
 * - a genuine notification parses back to the transaction it is about (or to null or []: nothing tracked);
 * - no card number in any result or error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type {
  AuthorizeRequest,
  CardDetails,
  Connector,
  ConnectorCapabilities,
  NotificationHeaders,
} from '../connector';
import { ConnectorUnavailableError, NotificationRejectedError } from '../connector-errors';
import type { ConnectorDefinition } from '../connector-registry';
import { PROVIDER_FETCH_REFUSED, type ProviderFetch } from '../provider-fetch';

export interface ReceivedProviderNotification {
  readonly raw: string;
  readonly headers: NotificationHeaders;
}

/** A provider (or its fake) with connections to it, as the contract drives it. */
export interface ConnectorContractSubject {
  readonly definition: ConnectorDefinition<never>;
  /** A connection, with capability overrides (which can only turn capabilities off). */
  connect(capabilities?: Partial<ConnectorCapabilities>): Connector;
  /** A connection whose provider is not there (a closed port). */
  connectUnreachable(): Connector;
  /** A connection calling its provider through `fetch` (its config's `fetch`: the vault's forwarder, in the service). */
  connectThrough(fetch: ProviderFetch): Connector;
  /** A card the provider approves, an ordinary amount it approves and one it declines (minor units, `currency`). */
  readonly card: CardDetails;
  readonly currency: string;
  /** `notified`: an amount whose authorization the provider follows with a notification (often any amount). */
  readonly amounts: { readonly approved: number; readonly declined: number; readonly notified: number };
  /**
   * Whether the provider can be asked about a transaction (`sync` finds it); false for one whose notifications are
   * its only word (Adyen's Checkout API): `sync` must then answer `unknown`, never a guess.
   */
  readonly readsTransactions: boolean;
  /** The first notification the provider sent that mentions `reference`, as its endpoint received it. */
  notificationAbout(reference: string): Promise<ReceivedProviderNotification>;
  stop(): Promise<void>;
}

/** An HTTP endpoint that keeps every notification posted to it: the connection's notification URL in a test. */
export async function startNotificationReceiver(): Promise<{
  readonly url: string;
  readonly received: readonly ReceivedProviderNotification[];
  waitFor(mentioning: string, timeoutMs?: number): Promise<ReceivedProviderNotification>;
  stop(): Promise<void>;
}> {
  const received: ReceivedProviderNotification[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      // Adyen wants `[accepted]`; the others take any 2xx.
      response.writeHead(200, { 'content-type': 'text/plain' }).end('[accepted]');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notifications`,
    received,
    async waitFor(mentioning, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find((notification) => notification.raw.includes(mentioning));
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `no notification mentioning ${mentioning} within ${timeoutMs} ms (${received.length} received)`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const succeededOrPending = ['succeeded', 'pending'];

/** Runs the contract against `start()`'s provider. `name`: the suite's title (the definition id, and against what). */
export function describeConnectorContract(
  name: string,
  start: () => Promise<ConnectorContractSubject>,
  options: { skip?: boolean } = {},
): void {
  describe.skipIf(options.skip ?? false)(`connector contract: ${name}`, () => {
    let subject: ConnectorContractSubject;
    let connector: Connector;
    const request = (overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest => ({
      reference: `contract-${randomUUID()}`,
      amount: subject.amounts.approved,
      currency: subject.currency,
      paymentInstrument: { type: 'card', card: subject.card },
      capture: false,
      ...overrides,
    });
    const neverTheCard = (value: unknown) => expect(JSON.stringify(value) ?? '').not.toContain(subject.card.number);

    beforeAll(async () => {
      subject = await start();
      connector = subject.connect();
    }, 60_000);
    afterAll(() => subject?.stop());

    it('has the definition’s capabilities, each a boolean', () => {
      expect(connector.definitionId).toBe(subject.definition.id);
      expect(connector.capabilities).toEqual(subject.definition.capabilities);
      for (const value of Object.values(connector.capabilities)) expect(typeof value).toBe('boolean');
    });

    it('authorizes, captures, refunds part, and sync finds the transaction by its ids', async () => {
      const authorization = request();
      const authorized = await connector.authorize(authorization);
      expect(authorized).toMatchObject({ outcome: 'succeeded', providerTransactionId: expect.any(String) });
      if (authorized.outcome !== 'succeeded') return;
      const ref = { reference: authorization.reference, providerTransactionId: authorized.providerTransactionId! };
      const captured = await connector.capture({
        ...ref,
        captureReference: `capture-${randomUUID()}`,
        amount: authorization.amount,
        currency: authorization.currency,
      });
      expect(succeededOrPending).toContain(captured.outcome);
      const refunded = await connector.refund({
        ...ref,
        refundReference: `refund-${randomUUID()}`,
        amount: Math.floor(authorization.amount / 2),
        currency: authorization.currency,
      });
      expect(succeededOrPending).toContain(refunded.outcome);
      const synced = await connector.sync(ref);
      if (subject.readsTransactions) {
        expect(synced).toMatchObject({
          outcome: 'found',
          transaction: { reference: authorization.reference, providerTransactionId: ref.providerTransactionId },
        });
      } else {
        expect(synced).toEqual({ outcome: 'unknown' });
      }
      [authorized, captured, refunded, synced].forEach(neverTheCard);
    });

    it('voids an authorization that was not captured', async () => {
      const authorization = request();
      const authorized = await connector.authorize(authorization);
      expect(authorized.outcome).toBe('succeeded');
      if (authorized.outcome !== 'succeeded') return;
      const voided = await connector.void({
        reference: authorization.reference,
        providerTransactionId: authorized.providerTransactionId!,
        voidReference: `void-${randomUUID()}`,
      });
      expect(succeededOrPending).toContain(voided.outcome);
    });

    it('answers a decline as a value with a standardized error code, not an error', async () => {
      const declined = await connector.authorize(request({ amount: subject.amounts.declined }));
      expect(declined).toMatchObject({ outcome: 'declined', errorCode: expect.any(String) });
      neverTheCard(declined);
    });

    it('refuses what a connection turned off, before calling the provider', async () => {
      const unused = { reference: `contract-${randomUUID()}`, providerTransactionId: 'never-sent' };
      const refused = (capability: keyof ConnectorCapabilities) => ({
        outcome: 'refused',
        reason: 'capability_disabled',
        capability,
      });
      expect(await subject.connect({ delayedCapture: false }).authorize(request())).toEqual(refused('delayedCapture'));
      expect(
        await subject
          .connect({ incrementalAuthorization: false })
          .incrementAuthorization({ ...unused, amount: 100, currency: subject.currency }),
      ).toEqual(refused('incrementalAuthorization'));
      expect(
        await subject
          .connect({ multipleCaptures: false })
          .capture({ ...unused, amount: 100, currency: subject.currency, final: false }),
      ).toEqual(refused('multipleCaptures'));
      expect(subject.connect({ networkTokens: false }).capabilities.networkTokens).toBe(false);
    });

    it('throws a retriable ConnectorUnavailableError when the provider cannot be reached', async () => {
      const error = await subject
        .connectUnreachable()
        .authorize(request())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConnectorUnavailableError);
      expect(error).toMatchObject({ type: 'connector_unavailable', retriable: true });
      neverTheCard({ message: (error as Error).message, cause: String((error as Error).cause) });
    });

    it('throws a retriable ConnectorUnavailableError when its fetch refused the call without making it (the vault forwarder)', async () => {
      const refusing: ProviderFetch = async () => {
        throw Object.assign(new Error('refused: host not declared'), { code: PROVIDER_FETCH_REFUSED });
      };
      const error = await subject
        .connectThrough(refusing)
        .authorize(request())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConnectorUnavailableError);
      expect(error).toMatchObject({ type: 'connector_unavailable', retriable: true });
    });

    it('parses a genuine notification back to its transaction, and rejects an altered or foreign one', async () => {
      const authorization = request({ amount: subject.amounts.notified, capture: true });
      const authorized = await connector.authorize(authorization);
      expect(succeededOrPending).toContain(authorized.outcome);
      const delivered = await subject.notificationAbout(authorization.reference);
      const parsed = connector.parseNotification(delivered.raw, delivered.headers);
      // null or [] (nothing tracked), one notification, or a provider's batch (Adyen) in its order.
      const notifications = parsed === null ? [] : Array.isArray(parsed) ? parsed : [parsed];
      for (const notification of notifications) expect(notification.reference).toBe(authorization.reference);
      neverTheCard(parsed);
      const altered = delivered.raw.replace(authorization.reference, `${authorization.reference}-altered`);
      expect(() => connector.parseNotification(altered, delivered.headers)).toThrow(NotificationRejectedError);
      expect(() => connector.parseNotification('{"not":"a notification"}', delivered.headers)).toThrow(
        NotificationRejectedError,
      );
      expect(() => connector.parseNotification('not json', {})).toThrow(NotificationRejectedError);
    });
  });
}
