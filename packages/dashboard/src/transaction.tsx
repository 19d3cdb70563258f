/**
 * One transaction and its timeline: every event, oldest first, with what the service recorded about it (who, which
 * rule, which connection, the provider's answer) and the transaction as it stood right after it.
 */
import { api } from './api';
import { money, time, words } from './format';
import { href } from './router';
import type { TransactionSummary } from './transactions';
import { useLoad } from './use-load';

interface TransactionState extends TransactionSummary {
  readonly intent: string;
  readonly updated_at: string;
  readonly error_code: string | null;
  readonly raw_response_code: string | null;
}

interface TimelineStep {
  readonly event: {
    readonly id: string;
    readonly name: string;
    readonly created_at: string;
    readonly context: Record<string, unknown>;
  };
  readonly state_after: TransactionState | null;
}

interface TransactionPageData {
  readonly transaction: TransactionState;
  readonly timeline: TimelineStep[];
  readonly timeline_complete: boolean;
}

/** A value as one line: strings as they are, objects as `key value` pairs, the rest as JSON. */
function inline(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== null && inner !== undefined)
      .map(([key, inner]) => `${words(key)} ${inline(inner)}`)
      .join(', ');
  }
  return JSON.stringify(value);
}

/** The service's explanation of the step (who, which connection, which flow rule, what the provider answered). */
const EXPLAINED: ReadonlyArray<readonly [string, string]> = [
  ['actor', 'who'],
  ['payment_service_id', 'connection'],
  ['flow_rule_id', 'flow rule'],
  ['provider_response', 'provider response'],
];

/** The context's fields, shown as they are, without the two the step shows in its heading; the explanation first. */
function ContextFields({ context }: { context: Record<string, unknown> }) {
  const explanation = (context.explanation ?? {}) as Record<string, unknown>;
  const rows: Array<[string, string]> = [
    ...EXPLAINED.filter(([key]) => explanation[key] !== null && explanation[key] !== undefined).map(
      ([key, label]): [string, string] => [label, inline(explanation[key])],
    ),
    ...Object.entries(context)
      .filter(
        ([key, value]) => !['event', 'status', 'explanation'].includes(key) && value !== null && value !== undefined,
      )
      .map(([key, value]): [string, string] => [words(key), inline(value)]),
  ];
  if (rows.length === 0) return null;
  return (
    <dl className="context">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd className="mono">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function StateAfter({ state }: { state: TransactionState | null }) {
  if (!state) return <p className="muted">State after: not available from this transactions service.</p>;
  return (
    <p className="state-after" data-testid="state-after">
      State after:{' '}
      <span className={`status ${state.status}`} data-testid="state-status">
        {state.status}
      </span>{' '}
      · authorized {money(state.authorized_amount, state.currency)} · captured{' '}
      {money(state.captured_amount, state.currency)} · refunded{' '}
      <span data-testid="state-refunded">{money(state.refunded_amount, state.currency)}</span>
    </p>
  );
}

export function TransactionPage({ account, id }: { account: string; id: string }) {
  const [loaded] = useLoad(
    () => api.get<TransactionPageData>(`transactions/${encodeURIComponent(id)}`, { merchant_account_id: account }),
    [account, id],
  );
  if (loaded.state === 'loading') return <p className="muted">Loading…</p>;
  if (loaded.state === 'failed') return <p className="error">{loaded.message}</p>;
  const { transaction, timeline, timeline_complete: complete } = loaded.value;
  return (
    <section>
      <p>
        <a href={href('transactions')}>← Transactions</a>
      </p>
      <h1>
        Transaction <span className="mono">{transaction.id}</span>
      </h1>
      <dl className="summary" data-testid="transaction-summary">
        <div>
          <dt>Status</dt>
          <dd>
            <span className={`status ${transaction.status}`} data-testid="transaction-status">
              {transaction.status}
            </span>
          </dd>
        </div>
        <div>
          <dt>Amount</dt>
          <dd>{money(transaction.amount, transaction.currency)}</dd>
        </div>
        <div>
          <dt>Captured</dt>
          <dd>{money(transaction.captured_amount, transaction.currency)}</dd>
        </div>
        <div>
          <dt>Refunded</dt>
          <dd>{money(transaction.refunded_amount, transaction.currency)}</dd>
        </div>
        <div>
          <dt>Card</dt>
          <dd>
            {transaction.payment_method?.label
              ? `${transaction.payment_method.scheme ?? ''} •••• ${transaction.payment_method.label}`
              : '—'}
          </dd>
        </div>
        <div>
          <dt>Connection</dt>
          <dd>{transaction.payment_service?.display_name ?? '—'}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{time(transaction.created_at)}</dd>
        </div>
      </dl>
      <h2>Timeline</h2>
      <ol className="timeline" data-testid="timeline">
        {timeline.map((step) => (
          <li key={step.event.id} data-event={String(step.event.context.event ?? step.event.name)}>
            <h3>
              <span data-testid="step-event">{String(step.event.context.event ?? step.event.name)}</span>{' '}
              <span className="muted">{step.event.name}</span>
              <time dateTime={step.event.created_at}>{time(step.event.created_at, true)}</time>
            </h3>
            <ContextFields context={step.event.context} />
            <StateAfter state={step.state_after} />
          </li>
        ))}
      </ol>
      {!complete && <p className="muted">This transaction has more events than the timeline shows.</p>}
    </section>
  );
}
