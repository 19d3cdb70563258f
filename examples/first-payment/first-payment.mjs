import { SwitchyardClient } from '@switchyard/client';

const client = new SwitchyardClient({ baseUrl: process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8080', credentials: 'demo-key.json' });
await client.paymentServices.create({ display_name: 'Cards', payment_service_definition_id: 'mock-card',
  fields: [{ key: 'merchant_id', value: 'demo' }], accepted_currencies: ['USD'], accepted_countries: ['US'] });
const payment = await client.transactions.create({ amount: 1299, currency: 'USD',
  payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' } });
await client.transactions.capture(payment.id);
const refund = await client.transactions.refund(payment.id, { amount: 500 });
console.log(payment.id, payment.status, refund.status);
