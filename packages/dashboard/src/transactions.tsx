/** The transactions of the merchant account, newest first, with the list's filters and paging. */
import { useState, type FormEvent } from 'react';
import { api, type Page } from './api';
import { isoFromLocal, money, time, words } from './format';
import { href } from './router';
import { may, type SessionInfo } from './session';
import { useLoad } from './use-load';

export interface TransactionSummary {
  readonly id: string;
  readonly status: string;
  readonly amount: number;
  readonly currency: string;
  readonly authorized_amount: number;
  readonly captured_amount: number;
  readonly refunded_amount: number;
  readonly created_at: string;
  readonly external_identifier: string | null;
  readonly payment_method: { readonly scheme: string | null; readonly label: string | null } | null;
  readonly payment_service: { readonly id: string; readonly display_name: string } | null;
}

export interface PaymentService {
  readonly id: string;
  readonly display_name: string;
}

/** The statuses the list filters on (the spec's transaction statuses). */
const STATUSES = [
  'processing',
  'buyer_approval_pending',
  'authorization_succeeded',
  'authorization_declined',
  'authorization_failed',
  'authorization_voided',
  'authorization_void_pending',
  'capture_succeeded',
  'capture_pending',
  'refunded',
];

interface Filters {
  status: string;
  payment_service_id: string;
  created_from: string;
  created_to: string;
  amount_min: string;
  amount_max: string;
}

const noFilters: Filters = {
  status: '',
  payment_service_id: '',
  created_from: '',
  created_to: '',
  amount_min: '',
  amount_max: '',
};

export function usePaymentServices(account: string, session: SessionInfo): PaymentService[] {
  const [loaded] = useLoad(
    () =>
      may(session, 'payment-services.read')
        ? api.get<Page<PaymentService>>('payment-services', { merchant_account_id: account })
        : Promise.resolve({ items: [] as PaymentService[] }),
    [account],
  );
  return loaded.state === 'ready' ? loaded.value.items : [];
}

export function TransactionsPage({ account, session }: { account: string; session: SessionInfo }) {
  const [draft, setDraft] = useState<Filters>(noFilters);
  const [filters, setFilters] = useState<Filters>(noFilters);
  const [cursor, setCursor] = useState<string | null>(null);
  const connections = usePaymentServices(account, session);
  const [page] = useLoad(
    () =>
      api.get<Page<TransactionSummary>>('transactions', {
        merchant_account_id: account,
        limit: 25,
        cursor,
        status: filters.status || undefined,
        payment_service_id: filters.payment_service_id || undefined,
        created_at_gte: isoFromLocal(filters.created_from),
        created_at_lte: isoFromLocal(filters.created_to),
        amount_gte: filters.amount_min || undefined,
        amount_lte: filters.amount_max || undefined,
      }),
    [account, filters, cursor],
  );
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setCursor(null);
    setFilters(draft);
  };
  const field = (name: keyof Filters) => ({
    name,
    value: draft[name],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [name]: e.target.value }),
  });

  return (
    <section>
      <h1>Transactions</h1>
      <form className="filters" onSubmit={apply} aria-label="Filters">
        <label>
          Status
          <select {...field('status')}>
            <option value="">any</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {words(status)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Connection
          <select {...field('payment_service_id')}>
            <option value="">any</option>
            {connections.map((connection) => (
              <option key={connection.id} value={connection.id}>
                {connection.display_name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Created from
          <input type="datetime-local" {...field('created_from')} />
        </label>
        <label>
          to
          <input type="datetime-local" {...field('created_to')} />
        </label>
        <label>
          Amount from (minor units)
          <input type="number" min="0" {...field('amount_min')} />
        </label>
        <label>
          to
          <input type="number" min="0" {...field('amount_max')} />
        </label>
        <button type="submit">Apply</button>
        <button
          type="button"
          onClick={() => {
            setDraft(noFilters);
            setFilters(noFilters);
            setCursor(null);
          }}
        >
          Clear
        </button>
      </form>
      {page.state === 'loading' && <p className="muted">Loading…</p>}
      {page.state === 'failed' && <p className="error">{page.message}</p>}
      {page.state === 'ready' && (
        <>
          <table data-testid="transactions">
            <thead>
              <tr>
                <th>Created</th>
                <th>Status</th>
                <th className="number">Amount</th>
                <th className="number">Captured</th>
                <th className="number">Refunded</th>
                <th>Card</th>
                <th>Connection</th>
                <th>Id</th>
              </tr>
            </thead>
            <tbody>
              {page.value.items.map((transaction) => (
                <tr key={transaction.id} data-transaction-id={transaction.id}>
                  <td>{time(transaction.created_at)}</td>
                  <td>
                    <span className={`status ${transaction.status}`}>{words(transaction.status)}</span>
                  </td>
                  <td className="number">{money(transaction.amount, transaction.currency)}</td>
                  <td className="number">{money(transaction.captured_amount, transaction.currency)}</td>
                  <td className="number">{money(transaction.refunded_amount, transaction.currency)}</td>
                  <td>
                    {transaction.payment_method?.label
                      ? `${transaction.payment_method.scheme ?? ''} •••• ${transaction.payment_method.label}`
                      : '—'}
                  </td>
                  <td>{transaction.payment_service?.display_name ?? '—'}</td>
                  <td>
                    <a href={href('transactions', transaction.id)} className="mono">
                      {transaction.id}
                    </a>
                  </td>
                </tr>
              ))}
              {page.value.items.length === 0 && (
                <tr>
                  <td colSpan={8} className="muted">
                    No transaction matches.
                  </td>
                </tr>
              )}
            </tbody>
          </table>
          <div className="pager">
            <button
              type="button"
              disabled={!page.value.previous_cursor}
              onClick={() => setCursor(page.value.previous_cursor)}
            >
              Newer
            </button>
            <button type="button" disabled={!page.value.next_cursor} onClick={() => setCursor(page.value.next_cursor)}>
              Older
            </button>
          </div>
        </>
      )}
    </section>
  );
}
