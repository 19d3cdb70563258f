/**
 * Issue 8 acceptance item 2, through the distributed runtime (identity, transactions, webhooks and two gateways as
 * separate OS processes over TCP, Kafka and Redis): a receiver that is down while 1,000 events happen, and comes
 * back, gets every one of them — in order per resource, none lost, every request signed by both active secrets —
 * also though the webhooks process is killed with SIGKILL twice and restarted (same DATA_DIR, same environment):
 *
 *   - kill 1: while the events are still being produced, after deliveries were queued and attempted (the receiver
 *     answering 503); restarted while production goes on, the receiver's port now closed (connection refused);
 *   - kill 2: while the backlog is being delivered to the receiver, up again (and slow, so that attempts are in
 *     flight); restarted at once.
 *
 * The events: 1,000 `PUT /api-key-pairs/{id}` (one `api-key-pair.updated` each) over 16 API key pairs, each pair's
 * changes made one after the other (so their order is known: the display name carries the change's number), the
 * pairs concurrently, through both gateways; plus the 16 `api-key-pair.created`.
 *
 * Delivery is at least once: a request the receiver answered 2xx just before a kill, not yet recorded, is sent
 * again under the same webhook id. Such duplicates are counted, printed, and bounded (at most one per request in
 * flight at the second kill: the delivery concurrency, 8); deduplicated on the webhook id, each event arrives once.
 */
import { randomBytes } from 'node:crypto';
import { identityTopic, webhookPatterns, type WebhookDelivery } from '@switchyard/contracts';
import { describeWithInfra, signToken, startTsProcess, waitFor, type RunningProcess } from '@switchyard/testing';
import {
  sleep,
  verifiesWith,
  WebhookReceiver,
  type ReceivedWebhook,
} from '../services/standalone/src/webhooks.receiver';
import {
  distributedInfrastructure,
  readTopics,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
} from './distributed.fixture';

const infrastructure = await distributedInfrastructure();

const RESOURCES = 16;
const UPDATES = 1_000;
/** The delivery slice's default concurrency: requests in flight at most. */
const DELIVERY_CONCURRENCY = 8;

const ok = (status: number | null) => status !== null && status >= 200 && status < 300;

describeWithInfra(
  'webhooks through the distributed runtime: 1,000 events, the receiver down, the webhooks process killed -9 twice',
  infrastructure,
  () => {
    let runtime: DistributedRuntime;
    let key: ApiKey;
    /** Managing API keys over the API needs the key-manager role (an administrator key is refused: spec rule 6). */
    let keyManager: ApiKey;
    let groupNote = '';
    const receiver = new WebhookReceiver();
    const timings: string[] = [];
    const started = Date.now();
    const mark = (what: string) => timings.push(`${((Date.now() - started) / 1000).toFixed(1)} s ${what}`);

    const token = () => signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 600 });

    async function send(
      url: string,
      method: string,
      route: string,
      body?: unknown,
      bearer?: string,
    ): Promise<{ status: number; body: any; text: string }> {
      const response = await fetch(`${url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${bearer ?? (await token())}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown = null;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed, text };
    }

    const processes = () => runtime.processes as Record<string, RunningProcess>;
    let kills = 0;

    /** kill -9 of the webhooks process; its output is kept under another name. */
    async function killWebhooks(): Promise<void> {
      const current = processes().webhooks!;
      await current.kill('SIGKILL');
      kills += 1;
      processes()[`webhooks (killed ${kills})`] = current;
      delete processes().webhooks;
      mark(`webhooks process killed -9 (${kills})`);
    }

    /** The webhooks process again, with the same DATA_DIR and environment; resolves once it answers its ping. */
    async function restartWebhooks(): Promise<void> {
      processes().webhooks = startTsProcess('services/webhooks/src/main.ts', { ...runtime.env });
      const rpc = runtime.rpcClient('webhooks');
      try {
        await waitFor(
          'the restarted webhooks service answering',
          async () => (await rpc.call(webhookPatterns.ping, {}), true),
          60_000,
          runtime.describe,
        );
      } finally {
        await rpc.close();
      }
      mark('webhooks process restarted and answering');
    }

    beforeAll(async () => {
      groupNote = 'a consumer group of its own (WEBHOOKS_CONSUMER_GROUP from the fixture)';
      runtime = await startDistributedRuntime({
        name: 'webhooks-distributed',
        env: {
          WEBHOOK_RETRY_BASE_MS: '100',
          WEBHOOK_RETRY_MAX_MS: '400',
          WEBHOOK_WORKER_INTERVAL_MS: '50',
          WEBHOOK_TIMEOUT_MS: '3000',
          POLL_INTERVAL_MS: '50',
        },
      });
      mark('runtime started');
      key = await runtime.createApiKey('webhooks-e2e', ['administrator']);
      keyManager = await runtime.createApiKey('webhooks-e2e-keys', ['key-manager', 'analyst']);
      for (const url of [runtime.baseUrl, runtime.secondUrl]) {
        await waitFor(
          `the new key accepted by ${url}`,
          async () => ((await send(url, 'GET', '/roles')).status === 200 ? true : undefined),
          10_000,
          runtime.describe,
        );
      }
    });

    afterAll(async () => {
      await receiver.down();
      await runtime?.stop();
    });

    it(`delivers all ${UPDATES} events (and the ${RESOURCES} creations), in order per resource, none lost, every request signed`, {
      timeout: 150_000,
    }, async () => {
      const deadline = Date.now() + 120_000;
      const left = () => Math.max(1_000, deadline - Date.now());

      // The receiver is "down" first by answering 503.
      receiver.answer = () => 503;
      await receiver.up();
      const subscription = await send(runtime.baseUrl, 'POST', '/webhook-subscriptions', {
        url: receiver.url,
        merchant_account_id: null,
        event_names: ['api-key-pair.created', 'api-key-pair.updated'],
        description: 'webhooks e2e',
      });
      expect(subscription.status, subscription.text).toBe(201);
      const subscriptionId = subscription.body.id as string;
      const secrets: string[] = [];
      for (let i = 0; i < 2; i += 1) {
        const created = await send(runtime.baseUrl, 'POST', `/webhook-subscriptions/${subscriptionId}/secrets`);
        expect(created.status, created.text).toBe(201);
        secrets.push(created.body.secret);
      }

      const roles = (await send(runtime.baseUrl, 'GET', '/roles')).body.items as { id: string; slug: string }[];
      const analyst = roles.find((role) => role.slug === 'analyst')!.id;
      const run = randomBytes(3).toString('hex');
      const bearer = await signToken({ kid: keyManager.kid, privateKeyPem: keyManager.private_key, expiresIn: 600 });
      const pairIds: string[] = [];
      for (let k = 0; k < RESOURCES; k += 1) {
        const created = await send(
          runtime.baseUrl,
          'POST',
          '/api-key-pairs',
          { display_name: `wh-${run}-${k}-created`, role_ids: [analyst] },
          bearer,
        );
        expect(created.status, created.text).toBe(201);
        pairIds.push(created.body.id);
      }
      mark(`${RESOURCES} API key pairs created`);

      // ---- production: 1,000 updates, each pair's one after the other, the pairs concurrently ----
      let produced = 0;
      const failures: string[] = [];
      // The last part of production waits for the webhooks restart, so that the restart always lands while production
      // goes on, however slow the machine makes the waits before it.
      const HOLD_AT = 800;
      let releaseProduction: () => void = () => undefined;
      const restarted = new Promise<void>((resolve) => {
        releaseProduction = resolve;
      });
      const perPair = pairIds.map((_, k) => Math.floor(UPDATES / RESOURCES) + (k < UPDATES % RESOURCES ? 1 : 0));
      const production = Promise.all(
        pairIds.map(async (id, k) => {
          const via = k % 2 === 0 ? runtime.baseUrl : runtime.secondUrl;
          for (let i = 0; i < perPair[k]!; i += 1) {
            if (produced >= HOLD_AT) await restarted;
            const updated = await send(
              via,
              'PUT',
              `/api-key-pairs/${id}`,
              { display_name: `wh-${run}-${k}-${i}` },
              bearer,
            );
            if (updated.status !== 200) failures.push(`PUT ${id} #${i}: ${updated.status} ${updated.text}`);
            produced += 1;
          }
        }),
      );

      const listAll = async (): Promise<WebhookDelivery[]> => {
        const items: WebhookDelivery[] = [];
        let cursor: string | null = null;
        do {
          const page: { status: number; body: { items: WebhookDelivery[]; next_cursor: string | null }; text: string } =
            await send(
              runtime.baseUrl,
              'GET',
              `/webhook-subscriptions/${subscriptionId}/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
              undefined,
              bearer,
            );
          if (page.status !== 200) throw new Error(`deliveries answered ${page.status}: ${page.text}`);
          items.push(...page.body.items);
          cursor = page.body.next_cursor;
        } while (cursor);
        return items;
      };
      // Only this run's pairs: the topics (and so the events of other installations' API key pairs, e.g. another e2e
      // file running meanwhile) are shared on the test broker, and this subscription is instance level.
      const ours = new Set(pairIds);
      const listOurs = async () => (await listAll()).filter((item) => ours.has(item.resource_id));

      // Kill 1: deliveries are queued and attempted (503s seen), events still being produced.
      await waitFor(
        '300 events produced and 20 attempts answered 503',
        async () => (produced >= 300 && receiver.requests.length >= 20 ? true : undefined),
        left(),
        runtime.describe,
      );
      // ... and at least one of those 503s recorded by the service (a loaded machine can get 20 requests to the receiver
      // before the worker records any answer), so the attempts can show the outage after the kill.
      const recorded503 = async () =>
        (await listOurs()).some((item) => item.attempts.some((attempt) => attempt.response_status === 503));
      await waitFor(
        'a 503 attempt recorded',
        async () => ((await recorded503()) ? true : undefined),
        left(),
        runtime.describe,
      );
      mark(`${produced} produced, ${receiver.requests.length} attempts so far (503)`);
      await killWebhooks();
      // Down in the other way from now on: the port closed, connections refused.
      await receiver.down();
      const attemptsBeforeKill1 = receiver.requests.length;

      await waitFor('650 events produced', async () => (produced >= 650 ? true : undefined), left(), runtime.describe);
      expect(produced).toBeLessThan(UPDATES);
      mark(`${produced} produced; restarting`);
      await restartWebhooks();
      releaseProduction();
      await production;
      mark(`all ${produced} produced`);
      expect(failures).toEqual([]);

      // Everything is queued while the receiver is down: 1,016 deliveries, none succeeded.
      const total = RESOURCES + UPDATES;
      const queued = await waitFor(
        `${total} deliveries queued`,
        async () => {
          const items = await listOurs();
          return items.length >= total ? items : undefined;
        },
        left(),
        runtime.describe,
      );
      expect(queued).toHaveLength(total);
      expect(queued.filter((item) => item.status === 'succeeded')).toEqual([]);
      mark(`${total} deliveries queued, none succeeded; receiver up`);

      // Up again (slow enough that attempts are in flight), then kill 2 in the middle of the catch-up.
      receiver.answer = () => 200;
      receiver.latencyMs = 15;
      await receiver.up();
      const uniqueSucceeded = () =>
        new Set(receiver.succeeded.filter((r) => ours.has(String(r.event.target.id))).map((r) => r.webhookId)).size;
      await receiver.waitFor(
        'a third of the backlog delivered',
        () => uniqueSucceeded() >= total / 3,
        left(),
        runtime.describe,
      );
      mark(`${uniqueSucceeded()} delivered; killing`);
      await killWebhooks();
      const deliveredAtKill2 = uniqueSucceeded();
      expect(deliveredAtKill2).toBeLessThan(total);
      await restartWebhooks();

      await receiver.waitFor(
        `all ${total} events delivered`,
        () => uniqueSucceeded() >= total,
        left(),
        () => `${uniqueSucceeded()} delivered\n${runtime.describe()}`,
      );
      // A little longer: anything still coming (it must only be duplicates) is counted too.
      await sleep(500);
      mark(`all ${total} delivered`);

      // ---- what the receiver got ----
      const foreign = receiver.requests.filter((r) => !ours.has(String(r.event.target.id)));
      const requests = receiver.requests.filter((r) => ours.has(String(r.event.target.id)));
      const succeeded = requests.filter((r) => ok(r.answered));
      const eventKey = (r: ReceivedWebhook) => `${r.event.id}:${r.event.name}`;

      // Each webhook id is one event (one name of one stored event), with the very same bytes on every request.
      const byWebhook = new Map<string, ReceivedWebhook[]>();
      for (const r of requests) byWebhook.set(r.webhookId, [...(byWebhook.get(r.webhookId) ?? []), r]);
      const webhooksPerEvent = new Map<string, Set<string>>();
      for (const [webhookId, all] of byWebhook) {
        expect(new Set(all.map(eventKey)).size, `webhook id ${webhookId}`).toBe(1);
        expect(new Set(all.map((r) => r.rawBody)).size, `webhook id ${webhookId}`).toBe(1);
        const at = eventKey(all[0]!);
        webhooksPerEvent.set(at, (webhooksPerEvent.get(at) ?? new Set()).add(webhookId));
      }
      expect([...webhooksPerEvent.values()].filter((ids) => ids.size !== 1)).toEqual([]);
      expect(webhooksPerEvent.size).toBe(total);

      // Every request, whatever it was answered, is signed by both active secrets (each verifies on its own) and fresh.
      const badSignatures = requests.filter(
        (r) => r.signatures.length !== 2 || secrets.some((secret) => !verifiesWith(r, secret).ok),
      );
      expect(badSignatures.map((r) => `${r.webhookId} #${r.index}`)).toEqual([]);
      expect(requests.filter((r) => Math.abs(r.timestamp - r.receivedAt / 1000) > 5)).toEqual([]);

      // Exactly once after deduplication on the webhook id; duplicates counted.
      const firstSuccess = new Map<string, ReceivedWebhook>();
      for (const r of succeeded) if (!firstSuccess.has(r.webhookId)) firstSuccess.set(r.webhookId, r);
      const duplicates = succeeded.length - firstSuccess.size;
      const byName = (name: string) => [...firstSuccess.values()].filter((r) => r.event.name === name).length;
      expect(byName('api-key-pair.updated')).toBe(UPDATES);
      expect(byName('api-key-pair.created')).toBe(RESOURCES);
      expect(new Set([...firstSuccess.values()].map((r) => r.event.target.id))).toEqual(new Set(pairIds));
      expect(duplicates).toBeLessThanOrEqual(DELIVERY_CONCURRENCY);

      // ---- order per resource: as the changes were made ----
      // The production order from the stored events on Kafka: each update's display name carries its number.
      const mine = new Set([...firstSuccess.values()].map((r) => r.event.id));
      const messages = await readTopics([identityTopic], {
        until: (read) => read.filter((m) => mine.has(JSON.parse(m.value?.toString() ?? '{}').id)).length >= mine.size,
        timeoutMs: 30_000,
      });
      const rankOf = new Map<string, number>();
      for (const message of messages) {
        const event = JSON.parse(message.value?.toString() ?? '{}') as {
          id: string;
          type: string;
          revision: number;
          data: { id: string; displayName?: string };
        };
        if (!mine.has(event.id)) continue;
        const k = pairIds.indexOf(event.data.id);
        expect(k, event.id).toBeGreaterThanOrEqual(0);
        if (event.type === 'ApiKeyPairCreated') rankOf.set(event.id, 0);
        else {
          const match = /^wh-[0-9a-f]+-(\d+)-(\d+)$/.exec(event.data.displayName ?? '');
          expect(match?.[1], event.id).toBe(String(k));
          rankOf.set(event.id, Number(match![2]) + 1);
        }
      }
      expect(rankOf.size).toBe(total);

      const outOfOrder: string[] = [];
      for (const [k, id] of pairIds.entries()) {
        const all = requests.filter((r) => r.event.target.id === id);
        const firsts = [...firstSuccess.values()].filter((r) => r.event.target.id === id);
        // Each change once, in the order it was made (ranks 0 = created, 1..n = the PUTs).
        const ranks = firsts.map((r) => rankOf.get(r.event.id)!);
        expect(ranks, `pair ${k}`).toEqual(Array.from({ length: perPair[k]! + 1 }, (_, i) => i));
        // Every request (503s, retries, duplicates included): never a later change before the earlier one succeeded.
        let highestDone = -1;
        let previous = -1;
        for (const r of all) {
          const rank = rankOf.get(r.event.id)!;
          if (rank < previous || rank > highestDone + 1)
            outOfOrder.push(
              `pair ${k}: request #${r.index} (rank ${rank}) after rank ${previous}, ${highestDone} done`,
            );
          previous = rank;
          if (ok(r.answered)) highestDone = Math.max(highestDone, rank);
        }
        const times = firsts.map((r) => Date.parse(r.event.created_at));
        expect(
          [...times].sort((a, b) => a - b),
          `pair ${k} created_at`,
        ).toEqual(times);
      }
      expect(outOfOrder).toEqual([]);

      // ---- what the service says: every delivery succeeded; attempts show the outage ----
      const final = await waitFor(
        'every delivery recorded as succeeded',
        async () => {
          const items = await listOurs();
          return items.length === total && items.every((item) => item.status === 'succeeded') ? items : undefined;
        },
        left(),
        runtime.describe,
      );
      expect(new Set(final.map((item) => item.id))).toEqual(new Set(firstSuccess.keys()));
      const attempts = final.flatMap((item) => item.attempts);
      const refused = attempts.filter((attempt) => attempt.response_status === null);
      expect(attempts.filter((attempt) => attempt.response_status === 503).length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((attempt) => typeof attempt.error === 'string' && attempt.error.length > 0)).toBe(true);
      for (const item of final) expect(item.attempts.at(-1)?.response_status, item.id).toBe(200);

      const summary = [
        `webhooks e2e: ${UPDATES} updates + ${RESOURCES} creations over ${RESOURCES} API key pairs; ${total} events delivered exactly once after dedupe`,
        `  requests ${requests.length} (${attemptsBeforeKill1} before kill 1, all 503), 2xx ${succeeded.length}, duplicates of a 2xx ${duplicates} (bound ${DELIVERY_CONCURRENCY})`,
        `  recorded attempts ${attempts.length}: 503 ${attempts.filter((a) => a.response_status === 503).length}, refused/no answer ${refused.length}, 200 ${attempts.filter((a) => a.response_status === 200).length}`,
        `  delivered at kill 2: ${deliveredAtKill2}; consumer group ${groupNote}; requests about other installations' pairs (shared topics): ${foreign.length}`,
        ...timings.map((line) => `  ${line}`),
      ];
      console.log(summary.join('\n'));
    });
  },
);
