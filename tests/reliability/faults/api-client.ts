/**
 * The fault suite's HTTP client: every request to the service goes through `send`, which counts requests and tallies
 * every 5xx by status and route, so the suite can prove which 5xx codes were answered, and where.
 */
export interface Answer {
  readonly status: number;
  /** The parsed JSON body (the text when it is not JSON, null when empty). */
  readonly body: any;
  readonly text: string;
}

export interface SendOptions {
  readonly body?: unknown;
  /** `x-service-merchant-account-id`. */
  readonly account?: string;
  readonly headers?: Record<string, string>;
  /** No Authorization header (public endpoints). */
  readonly anonymous?: boolean;
}

export const ACCOUNT_HEADER = 'x-service-merchant-account-id';

export class ApiClient {
  requests = 0;
  /** Every 5xx answered: `<status> <METHOD> <route>` → count (ids in routes replaced by `:id`). */
  readonly serverErrors: Record<string, number> = {};

  constructor(
    private readonly baseUrl: () => string,
    private readonly bearer: () => Promise<string>,
  ) {}

  async send(method: string, route: string, options: SendOptions = {}): Promise<Answer> {
    this.requests += 1;
    const response = await fetch(`${this.baseUrl()}${route}`, {
      method,
      headers: {
        ...(options.anonymous ? {} : { authorization: `Bearer ${await this.bearer()}` }),
        ...(options.account ? { [ACCOUNT_HEADER]: options.account } : {}),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = text;
    }
    if (response.status >= 500) {
      const key = `${response.status} ${method} ${route.split('?')[0]!.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ':id')}`;
      this.serverErrors[key] = (this.serverErrors[key] ?? 0) + 1;
    }
    return { status: response.status, body, text };
  }

  /** 5xx answered, by status code. */
  serverErrorsByCode(): Record<string, number> {
    const byCode: Record<string, number> = {};
    for (const [key, count] of Object.entries(this.serverErrors)) {
      const code = key.split(' ')[0]!;
      byCode[code] = (byCode[code] ?? 0) + count;
    }
    return byCode;
  }
}

/** A card payment body (the simulator decides by amount: docs/simulator.md). */
export const cardPayment = (amount: number, extra: Record<string, unknown> = {}) => ({
  amount,
  currency: 'USD',
  payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '123' },
  ...extra,
});

/** What the simulator holds for one reference (direct to the simulator, never through the proxy). */
export interface ProviderView {
  readonly ledger: {
    readonly authorizations: number;
    readonly captures: number;
    readonly refunds: number;
    readonly voids: number;
    readonly syncs: number;
  };
  /** The latest authorization with that reference; null when none reached the simulator. */
  readonly transaction: {
    readonly status: string;
    readonly authorized_amount: number;
    readonly captured_amount: number;
    readonly refunded_amount: number;
  } | null;
}

export async function providerView(simulatorUrl: string, reference: string): Promise<ProviderView> {
  const ledger = (await (
    await fetch(`${simulatorUrl}/v1/ledger?reference=${encodeURIComponent(reference)}`)
  ).json()) as ProviderView['ledger'];
  const found = await fetch(`${simulatorUrl}/v1/authorizations?reference=${encodeURIComponent(reference)}`);
  const transaction = found.status === 200 ? ((await found.json()) as ProviderView['transaction']) : null;
  return { ledger, transaction };
}

/** Our statuses whose authorization the provider must hold (authorized or captured at it). */
const heldAtProvider = new Set([
  'authorization_succeeded',
  'capture_pending',
  'capture_succeeded',
  'refunded',
  'authorization_void_pending',
]);

/**
 * Where our record and the provider's disagree, as readable strings (empty: consistent). Checked: the transaction
 * is decided (not `processing`), at most one authorization reached the provider, the authorization exists there
 * exactly when we say it succeeded, and captured and refunded amounts agree.
 */
export function inconsistencies(
  ours: { id: string; status: string; captured_amount: number; refunded_amount: number },
  provider: ProviderView,
): string[] {
  const problems: string[] = [];
  const at = `${ours.id} (ours ${ours.status}, provider ${provider.transaction?.status ?? 'none'})`;
  if (ours.status === 'processing') problems.push(`${at}: still processing`);
  if (provider.ledger.authorizations > 1)
    problems.push(`${at}: ${provider.ledger.authorizations} authorizations at the provider`);
  const providerHolds =
    provider.transaction !== null && ['authorized', 'captured'].includes(provider.transaction.status);
  if (heldAtProvider.has(ours.status) !== providerHolds)
    problems.push(
      `${at}: authorization held at the provider ${providerHolds}, by us ${heldAtProvider.has(ours.status)}`,
    );
  const captured = provider.transaction?.captured_amount ?? 0;
  const refunded = provider.transaction?.refunded_amount ?? 0;
  if (ours.captured_amount !== captured)
    problems.push(`${at}: captured ${ours.captured_amount} here, ${captured} at the provider`);
  if (ours.refunded_amount !== refunded)
    problems.push(`${at}: refunded ${ours.refunded_amount} here, ${refunded} at the provider`);
  return problems;
}
