/**
 * The vault through the distributed runtime (issue 19): the vault service as its own process (its own certificate,
 * store vault.db and key), the only one that answers for card data.
 * - Who may ask it what (libs/rpc rpc-services): the gateway `vault.*`, the transactions process its port
 *   (`vault-port.*`: card summaries and aliases, never a number; the forwarder; the key hand-over), no one else
 *   anything — the webhooks, identity and gift cards processes are refused every pattern.
 * - Its outbound forwarder over RPC, as the transactions process calls it: aliases swapped for the card's values in
 *   the body only for a host the call declares, the answer passed back unchanged; refused before any call for an
 *   undeclared host, an alias of another merchant account, and an alias past its time (CARD_ALIAS_TTL_MS).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  vaultForwardingPatterns,
  vaultPatterns,
  vaultPortPatterns,
  type ForwardedAnswer,
  type ForwardedRequest,
} from '@switchyard/contracts';
import type { TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import { describeWithInfra, signToken, waitFor } from '@switchyard/testing';
import {
  distributedInfrastructure,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
} from './distributed.fixture';

const infrastructure = await distributedInfrastructure();

/** How long an alias stands for its card in this runtime: short, so that the test can outlive one. */
const ALIAS_TTL_MS = 3_000;

describeWithInfra('the vault through the distributed runtime', infrastructure, () => {
  const account = `vault-e2e-${randomBytes(4).toString('hex')}`;
  let runtime: DistributedRuntime;
  let key: ApiKey;
  let receiver: http.Server;
  const received: { body: string; contentType: string | undefined }[] = [];
  const clients: TcpRpcClient[] = [];
  const client = (service: 'vault' | 'transactions', caller: string) => {
    const made = runtime.rpcClient(service, 10_000, caller);
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString(), contentType: request.headers['content-type'] });
        response.writeHead(202, 'Taken', { 'content-type': 'application/xml', 'x-provider': 'echo' });
        response.end('<answer>ok</answer>');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    runtime = await startDistributedRuntime({ name: 'vault-e2e', env: { CARD_ALIAS_TTL_MS: String(ALIAS_TTL_MS) } });
    key = await runtime.createApiKey('vault e2e', ['administrator']);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(clients.map((made) => made.close()));
    await runtime?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  async function storeCard(number: string): Promise<string> {
    const response = await fetch(`${runtime.baseUrl}/payment-methods`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 300 })}`,
        'x-service-merchant-account-id': account,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ method: 'card', number, expiration_date: '12/30' }),
    });
    const body = (await response.json()) as { id: string };
    expect(response.status, JSON.stringify(body)).toBe(201);
    return body.id;
  }

  const declared = () => `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const forwardOf = (merchantAccountId: string, body: string, hosts = [declared()]): ForwardedRequest => ({
    merchant_account_id: merchantAccountId,
    hosts,
    url: `http://${declared()}/authorize`,
    method: 'POST',
    headers: [['content-type', 'application/x-www-form-urlencoded']],
    body_base64: Buffer.from(body).toString('base64'),
    redirect: 'follow',
  });

  it('answers each caller only its patterns: the gateway vault.*, the transactions process its port, no one else anything', async () => {
    const ref = [account, randomUUID()];
    const transactions = client('vault', 'transactions');
    expect(await transactions.call(vaultPortPatterns.findCard, ref)).toBeNull();
    await expect(transactions.call(vaultPatterns.ping, {})).rejects.toMatchObject({ status: 403 });
    await expect(transactions.call(vaultPatterns.handOverCard, { merchant_account_id: account })).rejects.toMatchObject(
      { status: 403 },
    );

    const gateway = client('vault', 'gateway');
    await expect(gateway.call(vaultPatterns.ping, {})).resolves.toBeDefined();
    for (const pattern of [
      vaultPortPatterns.findCard,
      vaultPortPatterns.cardAliases,
      vaultForwardingPatterns.forward,
      vaultForwardingPatterns.keys,
    ])
      await expect(gateway.call(pattern, ref), pattern).rejects.toMatchObject({ status: 403 });

    for (const caller of ['webhooks', 'identity', 'gift-cards']) {
      const other = client('vault', caller);
      for (const pattern of [
        vaultPatterns.ping,
        'vault.buyers.list',
        vaultPortPatterns.findCard,
        vaultPortPatterns.cardAliases,
        vaultForwardingPatterns.forward,
        vaultForwardingPatterns.keys,
      ])
        await expect(other.call(pattern, ref), `${caller} → ${pattern}`).rejects.toMatchObject({ status: 403 });
    }
  }, 60_000);

  it('forwards a card-bearing call: the aliases swapped for the card only for a declared host, the answer passed back unchanged; refused for an undeclared host, another merchant account and an expired alias', async () => {
    const number = '4111111111111111';
    const cardId = await storeCard(number);
    const transactions = client('vault', 'transactions');
    const aliases = (await transactions.call(vaultPortPatterns.cardAliases, [account, cardId, {}])) as {
      number: string;
      expirationDate: string;
    };
    expect(aliases.number).not.toContain(number.slice(6, 12));
    expect(aliases.expirationDate).toBe('12/30');
    const body = `card=${aliases.number}&expiry=12%2F30`;

    const answer = (await transactions.call(
      vaultForwardingPatterns.forward,
      forwardOf(account, body),
    )) as ForwardedAnswer;
    expect(answer).toMatchObject({ status: 202, status_text: 'Taken' });
    if (!('status' in answer)) throw new Error('no answer');
    expect(Buffer.from(answer.body_base64, 'base64').toString()).toBe('<answer>ok</answer>');
    expect(Object.fromEntries(answer.headers)).toMatchObject({ 'x-provider': 'echo' });
    expect(received.at(-1)).toEqual({
      body: `card=${number}&expiry=12%2F30`,
      contentType: 'application/x-www-form-urlencoded',
    });
    const calls = received.length;

    // Refused before any call: a host the call does not declare, an alias of another merchant account.
    expect(
      await transactions.call(vaultForwardingPatterns.forward, forwardOf(account, body, ['127.0.0.1:1'])),
    ).toMatchObject({ refused: { reason: 'host_not_declared', not_sent: true } });
    expect(await transactions.call(vaultForwardingPatterns.forward, forwardOf(`${account}-other`, body))).toMatchObject(
      {
        refused: { reason: 'alias_other_merchant_account', not_sent: true },
      },
    );
    // And once the alias's time is past.
    await new Promise((resolve) => setTimeout(resolve, ALIAS_TTL_MS + 500));
    expect(await transactions.call(vaultForwardingPatterns.forward, forwardOf(account, body))).toMatchObject({
      refused: { reason: expect.stringMatching(/^alias_(expired|unknown)$/), not_sent: true },
    });
    expect(received).toHaveLength(calls);
    // The refusals name no card value.
    expect(JSON.stringify(received.slice(calls))).not.toContain(number);
    await waitFor('nothing more reached the host', async () => received.length === calls || undefined, 1_000);
  }, 60_000);
});
