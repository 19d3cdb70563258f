/** docs/events.md documents every public event name: this keeps its table and `webhookEventNames` from drifting. */
import fs from 'node:fs';
import path from 'node:path';
import { webhookEventNames } from './webhooks';

const doc = fs.readFileSync(path.resolve(__dirname, '../../../docs/events.md'), 'utf8');

/** The rows of the table under `## Event names`, as their cells. */
function eventRows(markdown: string): string[][] {
  const section = markdown.split(/^#{1,6} /m).find((part) => part.startsWith('Event names\n'));
  if (!section) throw new Error('docs/events.md has no "## Event names" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

const rows = eventRows(doc);
const documented = rows.map((cells) => cells[0]!.replace(/`/g, ''));

describe('the event names table of docs/events.md', () => {
  it('lists every name of webhookEventNames', () => {
    const missing = webhookEventNames.filter((name) => !documented.includes(name));
    expect(missing, 'names missing from docs/events.md').toEqual([]);
  });

  it('lists no name that webhookEventNames does not have', () => {
    const unknown = documented.filter((name) => !(webhookEventNames as readonly string[]).includes(name));
    expect(unknown, 'names in docs/events.md that are not public event names').toEqual([]);
  });

  it('lists each name once', () => expect(documented.length).toBe(new Set(documented).size));

  it.each(rows.map((cells) => [cells[0], cells] as const))(
    '%s has a trigger, a topic, stored types and a target schema',
    (_name, cells) => {
      const [quotedName = '', trigger = '', topic = '', storedTypes = '', target = ''] = cells;
      const name = quotedName.replace(/`/g, '');
      expect(cells).toHaveLength(5);
      expect(trigger.length).toBeGreaterThan(20);
      expect(topic).toBe(name.startsWith('api-key-pair.') ? '`identity.events`' : '`transactions.events`');
      expect(storedTypes).toMatch(/`[A-Z][A-Za-z]+`/);
      const expectedTarget = {
        transaction: 'Transaction',
        capture: 'TransactionCapture',
        refund: 'Refund',
        'api-key-pair': 'ApiKeyPair',
      }[name.split('.')[0]!];
      expect(target).toContain(`\`${expectedTarget}\``);
    },
  );
});

describe('the failure messages', () => {
  it('name a missing and an unknown event', () => {
    const tampered = doc.replace(
      /^\| `refund\.failed` .*$/m,
      '| `refund.lost` | x | `transactions.events` | `RefundLost` | `Refund` |',
    );
    const names = eventRows(tampered).map((cells) => cells[0]!.replace(/`/g, ''));
    expect(webhookEventNames.filter((name) => !names.includes(name))).toEqual(['refund.failed']);
    expect(names.filter((name) => !(webhookEventNames as readonly string[]).includes(name))).toEqual(['refund.lost']);
  });
});
