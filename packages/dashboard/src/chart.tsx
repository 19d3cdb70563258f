/**
 * Authorization rate and latency per connection over the last hour: for each connection, one bar per minute (attempts
 * decided that minute: succeeded, declined, failed) and a line of the mean time the connection took to answer.
 * Plain SVG, no chart library. Refreshes every 30 s.
 */
import { useEffect } from 'react';
import { api } from './api';
import type { AuthorizationStatsBucket, ConnectionTotals } from '@switchyard/contracts';
import type { SessionInfo } from './session';
import { usePaymentServices } from './transactions';
import { useLoad } from './use-load';

type Bucket = AuthorizationStatsBucket;

interface Chart {
  readonly from: string;
  readonly to: string;
  readonly buckets: Bucket[];
  readonly connections: ConnectionTotals[];
}

const WIDTH = 732;
const HEIGHT = 160;
const LEFT = 36;
const RIGHT = 48;
const TOP = 8;
const BOTTOM = 20;
const MINUTE_MS = 60_000;

function ConnectionChart({ name, from, to, buckets }: { name: string; from: string; to: string; buckets: Bucket[] }) {
  const start = Date.parse(from);
  const minutes = Math.round((Date.parse(to) - start) / MINUTE_MS);
  const slot = (WIDTH - LEFT - RIGHT) / minutes;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const maxAttempts = Math.max(1, ...buckets.map((bucket) => bucket.attempts));
  const maxLatency = Math.max(1, ...buckets.map((bucket) => bucket.latency_ms_avg));
  const x = (minute: string) => LEFT + ((Date.parse(minute) - start) / MINUTE_MS) * slot;
  const y = (count: number) => TOP + plotHeight - (count / maxAttempts) * plotHeight;
  const latencyY = (ms: number) => TOP + plotHeight - (ms / maxLatency) * plotHeight;
  const line = buckets
    .map((bucket) => `${(x(bucket.minute) + slot / 2).toFixed(1)},${latencyY(bucket.latency_ms_avg).toFixed(1)}`)
    .join(' ');
  return (
    <svg
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={`Authorizations per minute and latency of ${name}`}
      className="chart"
    >
      <line x1={LEFT} y1={TOP + plotHeight} x2={WIDTH - RIGHT} y2={TOP + plotHeight} className="axis" />
      <text x={LEFT - 4} y={TOP + 8} className="tick" textAnchor="end">
        {maxAttempts}
      </text>
      <text x={LEFT - 4} y={TOP + plotHeight} className="tick" textAnchor="end">
        0
      </text>
      <text x={WIDTH - RIGHT + 4} y={TOP + 8} className="tick latency">
        {maxLatency} ms
      </text>
      <text x={LEFT} y={HEIGHT - 4} className="tick">
        −{minutes - 1} min
      </text>
      <text x={WIDTH - RIGHT} y={HEIGHT - 4} className="tick" textAnchor="end">
        now
      </text>
      {buckets.map((bucket) => {
        const left = x(bucket.minute) + 1;
        const width = Math.max(1, slot - 2);
        const failedTop = y(bucket.failed);
        const declinedTop = y(bucket.failed + bucket.declined);
        return (
          <g key={bucket.minute} data-minute={bucket.minute}>
            <title>{`${new Date(bucket.minute).toLocaleTimeString()}: ${bucket.attempts} attempts, ${bucket.succeeded} succeeded, ${bucket.declined} declined, ${bucket.failed} failed; ${bucket.latency_ms_avg} ms mean, ${bucket.latency_ms_max} ms max`}</title>
            <rect
              x={left}
              y={y(bucket.attempts)}
              width={width}
              height={declinedTop - y(bucket.attempts)}
              className="succeeded"
            />
            <rect x={left} y={declinedTop} width={width} height={failedTop - declinedTop} className="declined" />
            <rect x={left} y={failedTop} width={width} height={TOP + plotHeight - failedTop} className="failed" />
          </g>
        );
      })}
      {buckets.length > 0 && <polyline points={line} className="latency" />}
    </svg>
  );
}

export function ChartPage({ account, session }: { account: string; session: SessionInfo }) {
  const [chart, reload] = useLoad(
    () => api.get<Chart>('stats/authorizations', { merchant_account_id: account }),
    [account],
  );
  const connections = usePaymentServices(account, session);
  useEffect(() => {
    const timer = setInterval(reload, 30_000);
    return () => clearInterval(timer);
  }, [reload]);
  const nameOf = (id: string) => connections.find((connection) => connection.id === id)?.display_name ?? id;

  return (
    <section>
      <h1>Authorizations, last hour</h1>
      <p className="legend">
        <span className="swatch succeeded" /> succeeded <span className="swatch declined" /> declined{' '}
        <span className="swatch failed" /> failed <span className="swatch latency" /> mean latency (right scale)
      </p>
      {chart.state === 'loading' && <p className="muted">Loading…</p>}
      {chart.state === 'failed' && <p className="error">{chart.message}</p>}
      {chart.state === 'ready' && chart.value.connections.length === 0 && (
        <p className="muted">No authorization in the last hour.</p>
      )}
      {chart.state === 'ready' &&
        chart.value.connections.map((totals) => (
          <figure
            key={totals.payment_service_id}
            data-testid="connection-chart"
            data-payment-service-id={totals.payment_service_id}
          >
            <figcaption>
              <strong>{nameOf(totals.payment_service_id)}</strong> · {totals.attempts}{' '}
              {totals.attempts === 1 ? 'attempt' : 'attempts'} ·{' '}
              <span data-testid="success-rate">{(totals.success_rate * 100).toFixed(1)}%</span> succeeded ·{' '}
              {totals.latency_ms_avg} ms mean, {totals.latency_ms_max} ms max
            </figcaption>
            <ConnectionChart
              name={nameOf(totals.payment_service_id)}
              from={chart.value.from}
              to={chart.value.to}
              buckets={chart.value.buckets.filter((bucket) => bucket.payment_service_id === totals.payment_service_id)}
            />
          </figure>
        ))}
    </section>
  );
}
