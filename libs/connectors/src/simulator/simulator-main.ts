/**
 * Runs the mock-card simulator on its own port:
 *   MOCK_CARD_PORT=4010 MOCK_CARD_WEBHOOK_SECRET=... MOCK_CARD_CALLBACK_URL=http://127.0.0.1:3000/... \
 *   node -r ./scripts/register.cjs libs/connectors/src/simulator/simulator-main.ts
 */
import { startSimulator } from './simulator-server';

function ledgerCapacityOf(value: string): number {
  const capacity = Number(value);
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new Error(`MOCK_CARD_LEDGER_CAPACITY must be a positive integer, not ${JSON.stringify(value)}`);
  return capacity;
}

async function main(): Promise<void> {
  const secret = process.env.MOCK_CARD_WEBHOOK_SECRET;
  if (secret === undefined || secret === '') throw new Error('MOCK_CARD_WEBHOOK_SECRET is required');
  const simulator = await startSimulator({
    host: process.env.MOCK_CARD_HOST ?? '127.0.0.1',
    port: Number(process.env.MOCK_CARD_PORT ?? 4010),
    webhookSecret: secret,
    callbackUrl: process.env.MOCK_CARD_CALLBACK_URL || undefined,
    ...(process.env.MOCK_CARD_LEDGER_CAPACITY
      ? { ledgerCapacity: ledgerCapacityOf(process.env.MOCK_CARD_LEDGER_CAPACITY) }
      : {}),
  });
  process.stdout.write(`mock-card simulator listening on ${simulator.url}\n`);
  const shutdown = () => void simulator.stop().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
