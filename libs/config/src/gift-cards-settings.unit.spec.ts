import { inspect } from 'node:util';
import { loadSettings } from './index';

it('keeps GIFT_CARDS_KEY readable but out of anything that prints the settings, and never echoes a bad one', () => {
  expect(loadSettings({}).GIFT_CARDS_KEY).toBeUndefined();
  const configured = Buffer.alloc(32, 7).toString('base64');
  const settings = loadSettings({ GIFT_CARDS_KEY: configured });
  expect(settings.GIFT_CARDS_KEY).toBe(configured);
  expect(JSON.stringify(settings)).not.toContain(configured);
  expect(inspect(settings)).not.toContain(configured);
  expect(Object.keys(settings)).not.toContain('GIFT_CARDS_KEY');

  const bad = 'my-very-secret-gift-cards-passphrase';
  let message = '';
  try {
    loadSettings({ GIFT_CARDS_KEY: bad });
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toMatch(/^invalid configuration: GIFT_CARDS_KEY: must be base64/);
  expect(message).not.toContain(bad);
});
