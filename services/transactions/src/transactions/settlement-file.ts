/**
 * The simulator's settlement file (docs/simulator.md, "Settlement file"): CSV with a fixed header, one record per
 * settled capture or refund. Parsed strictly: a file that is not exactly this format is refused with the line
 * and the reason, never half-applied.
 */
import { ApiError } from '@switchyard/api';

export const settlementHeader = [
  'record_type',
  'provider_transaction_id',
  'reference',
  'provider_operation_id',
  'operation_reference',
  'amount',
  'currency',
  'status',
  'settled_at',
] as const;

export interface SettlementRecord {
  readonly recordType: 'capture' | 'refund';
  readonly providerTransactionId: string;
  readonly reference: string;
  readonly providerOperationId: string;
  readonly operationReference: string;
  readonly amount: number;
  readonly currency: string;
  readonly settledAt: string;
}

const refuse = (line: number, message: string): never => {
  throw ApiError.badRequest(`The settlement file is not in the expected format: line ${line}: ${message}`, [
    { location: 'body', pointer: '/content', message: `line ${line}: ${message}`, type: 'invalid_settlement_file' },
  ]);
};

export function parseSettlementFile(content: string): SettlementRecord[] {
  const lines = content.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines[0] !== settlementHeader.join(',')) refuse(1, `the header must be "${settlementHeader.join(',')}"`);
  return lines.slice(1).map((text, index) => {
    const line = index + 2;
    const cells = text.split(',');
    if (cells.length !== settlementHeader.length)
      refuse(line, `expected ${settlementHeader.length} columns, found ${cells.length}`);
    const [
      recordType,
      providerTransactionId,
      reference,
      providerOperationId,
      operationReference,
      amount,
      currency,
      status,
      settledAt,
    ] = cells as [string, string, string, string, string, string, string, string, string];
    if (recordType !== 'capture' && recordType !== 'refund')
      refuse(line, `record_type must be capture or refund, not "${recordType}"`);
    if (!/^\d{1,12}$/.test(amount)) refuse(line, 'amount must be a non-negative integer in minor units');
    if (!/^[A-Z]{3}$/.test(currency)) refuse(line, 'currency must be an ISO 4217 code');
    if (status !== 'settled') refuse(line, `status must be "settled", not "${status}"`);
    if (Number.isNaN(Date.parse(settledAt))) refuse(line, 'settled_at must be an ISO-8601 date-time');
    if (recordType === 'refund' && operationReference === '')
      refuse(line, 'a refund record needs its operation_reference');
    if (reference === '') refuse(line, 'reference is required');
    return {
      recordType,
      providerTransactionId,
      reference,
      providerOperationId,
      operationReference,
      amount: Number(amount),
      currency,
      settledAt,
    } as SettlementRecord;
  });
}
