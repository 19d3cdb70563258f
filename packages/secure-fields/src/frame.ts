/**
 * The frame's side (`/secure-fields/frame.html?field=&session=&parent=&channel=`, on the service's origin): one input,
 * the only place card data exists in the buyer's browser. It formats and checks what is typed and tells the
 * merchant's page (`parent`, the exact origin — never `*`) only `ready`, `change` (empty / complete / valid), `blur`
 * and, for the card number, `card-details-changed`. The three frames of one page share their values over
 * `BroadcastChannel` (same origin: the service's, so the merchant's page cannot listen), and the card number frame
 * posts all three to `POST /checkout/sessions/{id}/fields` when the page asks it to submit. For a stored payment
 * method the page names (`paymentMethodId`), the security code frame posts the method's id and the code typed into it.
 */
import { CardDetailsTracker, httpCardDetailsLookup } from './card-details';
import {
  caretAfter,
  cardNumberState,
  digitsOf,
  expiryState,
  formatCardNumber,
  formatExpiry,
  formatSecurityCode,
  securityCodeState,
  type InputState,
} from './card-input';
import {
  channelName,
  CHANNEL_PATTERN,
  isFieldName,
  MESSAGE_SOURCE,
  PAYMENT_METHOD_ID_PATTERN,
  SESSION_ID_PATTERN,
  type CardDetails,
  type ChannelMessage,
  type FieldName,
  type FrameMessage,
  type PageMessage,
} from './messages';

export interface FrameParams {
  readonly field: FieldName;
  readonly session: string;
  /** The merchant page's origin: the only target of this frame's messages, the only sender it listens to. */
  readonly parent: string;
  readonly channel: string;
  readonly placeholder: string | null;
}

/** The frame's query parameters, or null when one is missing or malformed (the service answers 400 for those). */
export function frameParams(search: string): FrameParams | null {
  const query = new URLSearchParams(search);
  const field = query.get('field');
  const session = query.get('session') ?? '';
  const parent = query.get('parent') ?? '';
  const channel = query.get('channel') ?? '';
  if (!isFieldName(field) || !SESSION_ID_PATTERN.test(session) || !CHANNEL_PATTERN.test(channel) || !isOrigin(parent))
    return null;
  const placeholder = query.get('placeholder');
  return { field, session, parent, channel, placeholder: placeholder === null ? null : placeholder.slice(0, 100) };
}

/** `https://shop.example` or `http://localhost:3000`: scheme, host and port, nothing else. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** The fields body the service takes, from the three values as typed; a message naming the field when one is not valid. */
export function fieldsBody(
  values: { readonly number: string; readonly expiry: string | undefined; readonly securityCode: string | undefined },
  scheme: string | null,
  now: Date,
): { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly message: string } {
  const number = digitsOf(values.number);
  if (!cardNumberState(number).valid) return { ok: false, message: 'The card number is not valid' };
  if (values.expiry === undefined) return { ok: false, message: 'The expiry date field is missing' };
  const expiry = expiryState(values.expiry, now);
  if (!expiry.valid) return { ok: false, message: 'The expiry date is not valid' };
  let securityCode: string | undefined;
  if (values.securityCode !== undefined) {
    securityCode = formatSecurityCode(values.securityCode);
    if (!securityCodeState(securityCode, scheme).valid) return { ok: false, message: 'The security code is not valid' };
  }
  return {
    ok: true,
    body: {
      payment_method: {
        method: 'card',
        number,
        expiration_date: expiry.value,
        ...(securityCode !== undefined ? { security_code: securityCode } : {}),
      },
    },
  };
}

/** The fields body for a stored payment method: its id and the security code typed again into this frame. */
export function storedMethodBody(
  paymentMethodId: string,
  securityCodeText: string,
  scheme: string | null,
): { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly message: string } {
  const idValid = PAYMENT_METHOD_ID_PATTERN.test(paymentMethodId);
  if (!idValid) return { ok: false, message: 'The payment method is not valid' };
  const securityCode = formatSecurityCode(securityCodeText);
  if (!securityCodeState(securityCode, scheme).valid) return { ok: false, message: 'The security code is not valid' };
  return { ok: true, body: { payment_method: { method: 'id', id: paymentMethodId, security_code: securityCode } } };
}

const clip = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/**
 * Why the service refused the fields, for the merchant's page: the spec error body's `message`, or the 422 body's
 * locations and messages — never its `input` (which could echo card data).
 */
export function refusalMessage(status: number, body: unknown): string {
  if (status === 429) return 'Too many attempts: wait a minute, then try again';
  const record = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  if (status === 422 && Array.isArray(record.detail)) {
    const problems = record.detail.slice(0, 3).map((issue: unknown) => {
      const { loc, msg } = (issue ?? {}) as { loc?: unknown; msg?: unknown };
      const where = Array.isArray(loc) ? loc.filter((part) => part !== 'body').join('.') : '';
      return `${where}: ${typeof msg === 'string' ? msg : 'not valid'}`;
    });
    return clip(`The card data was refused (${problems.join('; ')})`);
  }
  if (typeof record.message === 'string' && record.message !== '') return clip(record.message);
  return `The service answered HTTP ${status}`;
}

/** A message without its envelope (distributes over the union, as `Omit` alone would not). */
type Unwrapped<T> = T extends unknown ? Omit<T, 'source' | 'channel'> : never;

const randomId = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');

const EMPTY: InputState = { empty: true, complete: false, valid: false };
const sameState = (a: InputState, b: InputState) =>
  a.empty === b.empty && a.complete === b.complete && a.valid === b.valid;

/** How long the card number frame waits for the other frames' values, and for the service. */
const COLLECT_TIMEOUT_MS = 3_000;
const POST_TIMEOUT_MS = 20_000;

const INPUTS: Record<
  FieldName,
  { autocomplete: AutoFill; label: string; placeholder: string; maxLength: number; format: (text: string) => string }
> = {
  number: {
    autocomplete: 'cc-number',
    label: 'Card number',
    placeholder: '1234 1234 1234 1234',
    maxLength: 23,
    format: formatCardNumber,
  },
  expiry: {
    autocomplete: 'cc-exp',
    label: 'Expiry date (MM/YY)',
    placeholder: 'MM/YY',
    maxLength: 5,
    format: formatExpiry,
  },
  security_code: {
    autocomplete: 'cc-csc',
    label: 'Security code',
    placeholder: 'CVC',
    maxLength: 4,
    format: formatSecurityCode,
  },
};

function start(params: FrameParams): void {
  const { field, session, parent, channel } = params;
  const base = new URL('../', window.location.href).toString();
  const peers = new BroadcastChannel(channelName(channel));
  const spec = INPUTS[field];

  const input = document.createElement('input');
  input.type = 'text';
  input.name = field;
  input.id = field;
  input.inputMode = 'numeric';
  input.autocomplete = spec.autocomplete;
  input.maxLength = spec.maxLength;
  input.placeholder = params.placeholder ?? spec.placeholder;
  input.spellcheck = false;
  input.setAttribute('autocorrect', 'off');
  input.setAttribute('aria-label', spec.label);
  document.body.appendChild(input);

  const post = (message: Unwrapped<FrameMessage>) => {
    window.parent.postMessage({ source: MESSAGE_SOURCE, channel, ...message }, parent);
  };

  /** The scheme the card number frame last told (the security code's length depends on it). */
  let scheme: string | null = null;
  let posted: InputState = EMPTY;
  const stateNow = (): InputState => {
    if (field === 'number') return cardNumberState(digitsOf(input.value));
    if (field === 'expiry') return expiryState(input.value, new Date());
    return securityCodeState(input.value, scheme);
  };
  const tellState = () => {
    const state = stateNow();
    if (sameState(state, posted)) return;
    posted = state;
    post({ type: 'change', field, empty: state.empty, complete: state.complete, valid: state.valid });
  };

  const tracker =
    field === 'number'
      ? new CardDetailsTracker(httpCardDetailsLookup(base, session), (details: CardDetails) => {
          post({ type: 'card-details-changed', field: 'number', details });
          if (details.scheme !== scheme) {
            scheme = details.scheme;
            peers.postMessage({ type: 'scheme', scheme } satisfies ChannelMessage);
          }
        })
      : null;

  input.addEventListener('input', () => {
    const raw = input.value;
    const caret = input.selectionStart ?? raw.length;
    const formatted = spec.format(raw);
    if (formatted !== raw) {
      input.value = formatted;
      const at = caret >= raw.length ? formatted.length : caretAfter(formatted, digitsOf(raw.slice(0, caret)).length);
      input.setSelectionRange(at, at);
    }
    tellState();
    // Marked invalid when the buyer leaves the field, cleared as soon as it is right.
    if (stateNow().valid) input.setAttribute('aria-invalid', 'false');
    void tracker?.update(digitsOf(input.value));
  });
  input.addEventListener('blur', () => {
    const state = stateNow();
    input.setAttribute('aria-invalid', String(!state.empty && !state.valid));
    post({ type: 'blur', field });
  });

  peers.addEventListener('message', (event: MessageEvent<ChannelMessage>) => {
    const message = event.data;
    if (message.type === 'scheme' && field === 'security_code') {
      scheme = message.scheme;
      tellState();
    } else if (message.type === 'collect' && field !== 'number') {
      peers.postMessage({
        type: 'value',
        requestId: message.requestId,
        field,
        value: input.value,
      } satisfies ChannelMessage);
    }
  });

  /** The other frames' values, asked over the channel: the only way they leave their frame, and only to this one. */
  const collect = (fields: readonly FieldName[]): Promise<Map<FieldName, string>> =>
    new Promise((resolve, reject) => {
      const requestId = randomId();
      const values = new Map<FieldName, string>();
      const done = () => {
        clearTimeout(timer);
        peers.removeEventListener('message', listener);
      };
      const listener = (event: MessageEvent<ChannelMessage>) => {
        const message = event.data;
        if (message.type !== 'value' || message.requestId !== requestId || !fields.includes(message.field)) return;
        values.set(message.field, message.value);
        if (values.size === fields.length) {
          done();
          resolve(values);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`The ${fields.filter((name) => !values.has(name)).join(' and ')} field did not answer`));
      }, COLLECT_TIMEOUT_MS);
      peers.addEventListener('message', listener);
      if (fields.length === 0) {
        done();
        resolve(values);
        return;
      }
      peers.postMessage({ type: 'collect', requestId } satisfies ChannelMessage);
    });

  /** Posts a fields body to the session; the service's refusal comes back as its message. */
  const postFields = async (body: unknown): Promise<{ ok: boolean; message?: string }> => {
    let response: Response;
    try {
      response = await fetch(new URL(`checkout/sessions/${encodeURIComponent(session)}/fields`, base), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
    } catch {
      return { ok: false, message: 'Could not reach the payment service' };
    }
    if (response.status === 204) return { ok: true };
    const answer: unknown = await response.json().catch(() => null);
    return { ok: false, message: refusalMessage(response.status, answer) };
  };

  let submitting = false;
  type Submitted = { ok: boolean; message?: string };
  const submit = async (fields: readonly FieldName[], paymentMethodId: string | undefined): Promise<Submitted> => {
    if (submitting) return { ok: false, message: 'The card is already being submitted' };
    submitting = true;
    try {
      if (paymentMethodId !== undefined) {
        const stored = storedMethodBody(paymentMethodId, input.value, scheme);
        return stored.ok ? await postFields(stored.body) : stored;
      }
      const others = fields.filter(
        (name): name is 'expiry' | 'security_code' => name === 'expiry' || name === 'security_code',
      );
      const values = await collect(others);
      const built = fieldsBody(
        { number: input.value, expiry: values.get('expiry'), securityCode: values.get('security_code') },
        scheme,
        new Date(),
      );
      if (!built.ok) return built;
      return await postFields(built.body);
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : 'The card could not be submitted' };
    } finally {
      submitting = false;
    }
  };

  window.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== window.parent || event.origin !== parent) return;
    const data = event.data as Partial<PageMessage> | null;
    if (!data || data.source !== MESSAGE_SOURCE || data.channel !== channel || data.type !== 'submit') return;
    if (typeof data.requestId !== 'string' || !Array.isArray(data.fields)) return;
    const paymentMethodId = typeof data.paymentMethodId === 'string' ? data.paymentMethodId : undefined;
    // A typed card is posted by the card number frame; a stored method's code by the security code frame.
    if (field !== (paymentMethodId === undefined ? 'number' : 'security_code')) return;
    const requestId = data.requestId;
    const fields = data.fields.filter(isFieldName);
    void submit(fields, paymentMethodId).then((result) => post({ type: 'submit-result', requestId, ...result }));
  });

  post({ type: 'ready', field });
}

if (typeof document !== 'undefined' && typeof window !== 'undefined') {
  const params = frameParams(window.location.search);
  if (params) start(params);
}
