/** Webhook subscriptions, and one subscription's deliveries with every attempt; a failed delivery can be replayed. */
import { useState } from 'react';
import { api, type Page } from './api';
import { time, words } from './format';
import { href } from './router';
import { useLoad } from './use-load';

interface Subscription {
  readonly id: string;
  readonly url: string;
  readonly event_names: string[] | null;
  readonly merchant_account_id: string | null;
  readonly active: boolean;
  readonly description: string | null;
}

interface Attempt {
  readonly attempted_at: string;
  readonly response_status: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
}

interface Delivery {
  readonly id: string;
  readonly event_name: string;
  readonly resource_id: string;
  readonly status: string;
  readonly attempts: Attempt[];
  readonly next_attempt_at: string | null;
  readonly created_at: string;
}

export function WebhooksPage({ account }: { account: string }) {
  const [loaded] = useLoad(
    () => api.get<Page<Subscription>>('webhook-subscriptions', { merchant_account_id: account }),
    [account],
  );
  return (
    <section>
      <h1>Webhook subscriptions</h1>
      {loaded.state === 'loading' && <p className="muted">Loading…</p>}
      {loaded.state === 'failed' && <p className="error">{loaded.message}</p>}
      {loaded.state === 'ready' && (
        <table data-testid="subscriptions">
          <thead>
            <tr>
              <th>URL</th>
              <th>Events</th>
              <th>Scope</th>
              <th>Active</th>
              <th>Description</th>
            </tr>
          </thead>
          <tbody>
            {loaded.value.items.map((subscription) => (
              <tr key={subscription.id} data-subscription-id={subscription.id}>
                <td>
                  <a href={href('webhooks', subscription.id)} className="mono">
                    {subscription.url}
                  </a>
                </td>
                <td>{subscription.event_names?.join(', ') ?? 'all'}</td>
                <td>{subscription.merchant_account_id ?? 'every merchant account'}</td>
                <td>{subscription.active ? 'yes' : 'no'}</td>
                <td>{subscription.description ?? ''}</td>
              </tr>
            ))}
            {loaded.value.items.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No subscription.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}

const lastAttempt = (delivery: Delivery): Attempt | undefined => delivery.attempts[delivery.attempts.length - 1];
const attemptText = (attempt: Attempt | undefined): string =>
  attempt
    ? `${attempt.response_status ?? 'no answer'}${attempt.error ? ` (${attempt.error})` : ''} at ${time(attempt.attempted_at)}, ${attempt.duration_ms} ms`
    : '—';

export function SubscriptionPage({ account, id, canReplay }: { account: string; id: string; canReplay: boolean }) {
  const [status, setStatus] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const [subscription] = useLoad(
    () => api.get<Subscription>(`webhook-subscriptions/${encodeURIComponent(id)}`, { merchant_account_id: account }),
    [account, id],
  );
  const [deliveries, reload] = useLoad(
    () =>
      api.get<Page<Delivery>>(`webhook-subscriptions/${encodeURIComponent(id)}/deliveries`, {
        merchant_account_id: account,
        status: status || undefined,
        cursor,
        limit: 25,
      }),
    [account, id, status, cursor],
  );
  const [replaying, setReplaying] = useState<Record<string, string>>({});

  /** Replays now, then follows the delivery until its new attempt is in (a few seconds at most). */
  const replay = async (delivery: Delivery) => {
    const path = `webhook-subscriptions/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery.id)}`;
    setReplaying((current) => ({ ...current, [delivery.id]: 'replaying…' }));
    try {
      await api.post(`${path}/replay`, {}, { merchant_account_id: account });
      for (let round = 0; round < 40; round++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const now = await api.get<Delivery>(path, { merchant_account_id: account });
        if (now.attempts.length > delivery.attempts.length) {
          setReplaying((current) => ({ ...current, [delivery.id]: `replayed: ${attemptText(lastAttempt(now))}` }));
          break;
        }
      }
    } catch (error) {
      setReplaying((current) => ({
        ...current,
        [delivery.id]: `replay refused: ${error instanceof Error ? error.message : String(error)}`,
      }));
    }
    reload();
  };

  return (
    <section>
      <p>
        <a href={href('webhooks')}>← Webhook subscriptions</a>
      </p>
      <h1>Deliveries</h1>
      {subscription.state === 'ready' && (
        <p>
          to <span className="mono">{subscription.value.url}</span> ·{' '}
          {subscription.value.event_names?.join(', ') ?? 'every event'}
        </p>
      )}
      <label className="inline">
        Status
        <select
          value={status}
          onChange={(e) => {
            setStatus(e.target.value);
            setCursor(null);
          }}
        >
          <option value="">any</option>
          {['pending', 'retrying', 'succeeded', 'failed'].map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      </label>
      {deliveries.state === 'loading' && <p className="muted">Loading…</p>}
      {deliveries.state === 'failed' && <p className="error">{deliveries.message}</p>}
      {deliveries.state === 'ready' && (
        <>
          <table data-testid="deliveries">
            <thead>
              <tr>
                <th>Created</th>
                <th>Event</th>
                <th>Resource</th>
                <th>Status</th>
                <th className="number">Attempts</th>
                <th>Last attempt</th>
                <th>Next attempt</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {deliveries.value.items.map((delivery) => (
                <tr key={delivery.id} data-delivery-id={delivery.id}>
                  <td>{time(delivery.created_at)}</td>
                  <td>{delivery.event_name}</td>
                  <td className="mono">{delivery.resource_id}</td>
                  <td>
                    <span className={`status ${delivery.status}`} data-testid="delivery-status">
                      {words(delivery.status)}
                    </span>
                  </td>
                  <td className="number" data-testid="delivery-attempts">
                    {delivery.attempts.length}
                  </td>
                  <td data-testid="delivery-last-attempt">{attemptText(lastAttempt(delivery))}</td>
                  <td>{delivery.next_attempt_at ? time(delivery.next_attempt_at) : '—'}</td>
                  <td>
                    {canReplay && (
                      <button
                        type="button"
                        onClick={() => void replay(delivery)}
                        disabled={replaying[delivery.id] === 'replaying…'}
                      >
                        Replay
                      </button>
                    )}
                    {replaying[delivery.id] && (
                      <span className="muted" data-testid="replay-result">
                        {' '}
                        {replaying[delivery.id]}
                      </span>
                    )}
                  </td>
                </tr>
              ))}
              {deliveries.value.items.length === 0 && (
                <tr>
                  <td colSpan={8} className="muted">
                    No delivery.
                  </td>
                </tr>
              )}
            </tbody>
          </table>
          <div className="pager">
            <button
              type="button"
              disabled={!deliveries.value.previous_cursor}
              onClick={() => setCursor(deliveries.value.previous_cursor)}
            >
              Newer
            </button>
            <button
              type="button"
              disabled={!deliveries.value.next_cursor}
              onClick={() => setCursor(deliveries.value.next_cursor)}
            >
              Older
            </button>
          </div>
        </>
      )}
    </section>
  );
}
