/** `webhooks verify`'s logic: the outcome and the reason it prints for each way a received webhook can be wrong. */
import { InvalidArgumentError } from 'commander';
import { signatureHeaders } from '@switchyard/webhook-signature';
import { collectHeader, parseToleranceSeconds, verifyReceivedWebhook, type ReceivedHeaders } from './webhooks-verify';

const now = () => new Date('2025-03-01T10:00:00Z');
const timestamp = Math.floor(now().getTime() / 1000);
const rawBody = '{"type":"event","id":"e1","name":"transaction.captured"}\n';
const asReceived = (headers: Record<string, string>): ReceivedHeaders =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
const signed = (secrets: string[], at = timestamp) =>
  asReceived(signatureHeaders({ webhookId: 'wh_1', secrets, rawBody, timestamp: at }));

describe('verifyReceivedWebhook', () => {
  it('is valid when one signature matches one of the secrets', () => {
    expect(verifyReceivedWebhook({ secrets: ['old', 'new'], rawBody, headers: signed(['new']), now })).toEqual({
      valid: true,
      webhookId: 'wh_1',
      message: 'valid (webhook id wh_1)',
    });
    expect(
      verifyReceivedWebhook({ secrets: ['new'], rawBody: Buffer.from(rawBody), headers: signed(['old', 'new']), now })
        .valid,
    ).toBe(true);
  });

  it('names the headers that are missing', () => {
    const { 'x-service-webhook-timestamp': _dropped, ...headers } = signed(['s']);
    const outcome = verifyReceivedWebhook({ secrets: ['s'], rawBody, headers, now });
    expect(outcome).toMatchObject({ valid: false, reason: 'missing_headers' });
    expect(outcome.message).toMatch(/^invalid: missing_headers \(missing x-service-webhook-timestamp: /);
  });

  it('refuses a timestamp that is not unix seconds', () =>
    expect(
      verifyReceivedWebhook({
        secrets: ['s'],
        rawBody,
        headers: { ...signed(['s']), 'x-service-webhook-timestamp': ['2025-03-01'] },
        now,
      }),
    ).toMatchObject({ valid: false, reason: 'bad_timestamp' }));

  it('refuses a timestamp beyond the tolerance, saying how old it is, and accepts it with a larger tolerance', () => {
    const old = signed(['s'], timestamp - 301);
    const outcome = verifyReceivedWebhook({ secrets: ['s'], rawBody, headers: old, now });
    expect(outcome).toMatchObject({ valid: false, reason: 'stale_timestamp' });
    expect(outcome.message).toContain('signed at 2025-03-01T09:54:59.000Z, 301 s ago, beyond the tolerance of 300 s');
    expect(verifyReceivedWebhook({ secrets: ['s'], rawBody, headers: old, now, toleranceSeconds: 301 }).valid).toBe(
      true,
    );
    expect(
      verifyReceivedWebhook({
        secrets: ['s'],
        rawBody,
        headers: signed(['s'], timestamp + 60),
        now,
        toleranceSeconds: 30,
      }).message,
    ).toContain('60 s in the future');
  });

  it('refuses a wrong secret and a body changed by one byte', () => {
    expect(verifyReceivedWebhook({ secrets: ['other'], rawBody, headers: signed(['s']), now })).toMatchObject({
      valid: false,
      reason: 'no_matching_signature',
    });
    expect(
      verifyReceivedWebhook({ secrets: ['s'], rawBody: rawBody.trimEnd(), headers: signed(['s']), now }),
    ).toMatchObject({ valid: false, reason: 'no_matching_signature' });
  });

  it('needs a secret', () =>
    expect(verifyReceivedWebhook({ secrets: [''], rawBody, headers: signed(['s']), now })).toMatchObject({
      valid: false,
      reason: 'no_secret',
    }));
});

describe('the options', () => {
  it('collect headers by lower-cased name, keeping the value after the first colon', () => {
    const headers = [
      'X-Service-Webhook-Id: wh:1',
      'x-service-webhook-signatures:a',
      'X-Service-Webhook-Signatures:  b ',
    ].reduce<ReceivedHeaders>((all, value) => collectHeader(value, all), {});
    expect(headers).toEqual({ 'x-service-webhook-id': ['wh:1'], 'x-service-webhook-signatures': ['a', 'b'] });
  });

  it.each(['no colon', ': value', 'two words: value'])('refuse the header %j', (value) =>
    expect(() => collectHeader(value)).toThrow(InvalidArgumentError),
  );

  it('take a tolerance of whole seconds only', () => {
    expect(parseToleranceSeconds('0')).toBe(0);
    expect(parseToleranceSeconds('86400')).toBe(86400);
    for (const value of ['-1', '1.5', 'soon', ''])
      expect(() => parseToleranceSeconds(value)).toThrow(InvalidArgumentError);
  });
});
