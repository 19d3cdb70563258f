/**
 * The merchant's side: puts one iframe per field, served by the service, into the merchant's page and relays what the
 * frames tell (`ready`, `change`, `blur`, `card-details-changed`). Card data exists only inside the frames, on the
 * service's origin: the browser's same-origin policy keeps this page's JavaScript out of them, and no frame ever sends
 * card data here. `submit()` asks the card number frame to post the three fields to the service itself.
 */
import {
  CHANNEL_PATTERN,
  MESSAGE_SOURCE,
  PAYMENT_METHOD_ID_PATTERN,
  SESSION_ID_PATTERN,
  type CardDetails,
  type FieldName,
  type FrameMessage,
  type PageMessage,
} from './messages';

export type { CardDetails, FieldName } from './messages';

export interface SecureFieldsOptions {
  /** Where Switchyard is served, as the browser reaches it, e.g. `https://payments.example.com` (a path prefix is kept). */
  readonly serviceUrl: string;
  /** The checkout session the card is attached to (the merchant's server created it). */
  readonly sessionId: string;
}

export interface FieldOptions {
  readonly placeholder?: string;
}

export interface SubmitOptions {
  /**
   * Pay with this stored payment method of the merchant account instead of a typed card: only the security code
   * field is needed, and its frame posts `{method: "id", id, security_code}` to the session.
   */
  readonly paymentMethodId?: string;
}

export interface ChangeEvent {
  readonly field: FieldName;
  readonly empty: boolean;
  readonly complete: boolean;
  readonly valid: boolean;
}

export interface SecureFieldsEvents {
  /** Once every added field's frame has loaded. */
  ready: Record<string, never>;
  /** A field's state changed; never its value. */
  change: ChangeEvent;
  blur: { readonly field: FieldName };
  /** Card number field only (spec, Events rule 5). */
  'card-details-changed': CardDetails;
}
export type SecureFieldsEventName = keyof SecureFieldsEvents;

const EVENT_NAMES: readonly SecureFieldsEventName[] = ['ready', 'change', 'blur', 'card-details-changed'];

const TITLES: Record<FieldName, string> = {
  number: 'Secure card number input',
  expiry: 'Secure expiry date input',
  security_code: 'Secure security code input',
};

/** How long `submit()` waits for the card number frame's answer (it waits for the service itself: 20 s). */
const SUBMIT_TIMEOUT_MS = 30_000;

const randomId = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');

export class SecureFields {
  private readonly serviceOrigin: string;
  /** The service's base URL, ending in `/`. */
  private readonly base: string;
  private readonly sessionId: string;
  /** Ties the frames of this instance together (and to nothing else on the page). */
  private readonly channel = randomId();
  private readonly frames = new Map<FieldName, HTMLIFrameElement>();
  private readonly loaded = new Set<FieldName>();
  private readyFired = false;
  private readonly handlers = new Map<SecureFieldsEventName, Set<(detail: never) => void>>();
  /** Pending `submit()`s by request id, with the frame asked to post (the only one whose answer counts). */
  private readonly submissions = new Map<
    string,
    { resolve: () => void; reject: (error: Error) => void; timer: ReturnType<typeof setTimeout>; poster: FieldName }
  >();
  private destroyed = false;

  constructor(options: SecureFieldsOptions) {
    let url: URL;
    try {
      url = new URL(options.serviceUrl);
    } catch {
      throw new Error(`SecureFields: serviceUrl "${String(options.serviceUrl)}" is not an absolute URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new Error('SecureFields: serviceUrl must be an http(s) URL');
    if (!SESSION_ID_PATTERN.test(options.sessionId))
      throw new Error('SecureFields: sessionId must be a checkout session id (a UUID)');
    this.serviceOrigin = url.origin;
    this.base = `${url.origin}${url.pathname.replace(/\/+$/, '')}/`;
    this.sessionId = options.sessionId.toLowerCase();
    if (!CHANNEL_PATTERN.test(this.channel)) throw new Error('SecureFields: no random channel id');
    window.addEventListener('message', this.onMessage);
  }

  addCardNumberField(container: HTMLElement | string, options: FieldOptions = {}): void {
    this.addField('number', container, options);
  }

  addExpiryDateField(container: HTMLElement | string, options: FieldOptions = {}): void {
    this.addField('expiry', container, options);
  }

  addSecurityCodeField(container: HTMLElement | string, options: FieldOptions = {}): void {
    this.addField('security_code', container, options);
  }

  /** Takes a field's frame out of the page (React's unmount); it may be added again. */
  removeField(field: FieldName): void {
    this.frames.get(field)?.remove();
    this.frames.delete(field);
    this.loaded.delete(field);
  }

  /** Subscribes to an event; answers the function that unsubscribes. */
  on<E extends SecureFieldsEventName>(event: E, handler: (detail: SecureFieldsEvents[E]) => void): () => void {
    if (!EVENT_NAMES.includes(event))
      throw new Error(`SecureFields: no event "${String(event)}" (${EVENT_NAMES.join(', ')})`);
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    const registered = handler as (detail: never) => void;
    set.add(registered);
    return () => {
      set.delete(registered);
    };
  }

  /**
   * Has the card number frame post the fields, from inside the frames, to `POST /checkout/sessions/{id}/fields`.
   * With `paymentMethodId`, the security code frame posts that stored payment method with the code typed into it.
   * Resolves when the service answered 204; rejects with an Error saying why otherwise (a field not valid, the
   * session expired or used, too many requests, the service unreachable). The message never holds card data.
   */
  submit(options: SubmitOptions = {}): Promise<void> {
    if (this.destroyed) return Promise.reject(new Error('SecureFields: destroyed'));
    const { paymentMethodId } = options;
    if (paymentMethodId !== undefined && !PAYMENT_METHOD_ID_PATTERN.test(paymentMethodId)) {
      return Promise.reject(new Error('SecureFields: paymentMethodId must be a stored payment method id (a UUID)'));
    }
    const poster: FieldName = paymentMethodId === undefined ? 'number' : 'security_code';
    const frame = this.frames.get(poster);
    if (!frame?.contentWindow || !this.loaded.has(poster)) {
      const name = poster === 'number' ? 'card number' : 'security code';
      return Promise.reject(new Error(`The ${name} field is not ready`));
    }
    const target = frame.contentWindow;
    const requestId = randomId();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.submissions.delete(requestId);
        reject(new Error('The card fields did not answer'));
      }, SUBMIT_TIMEOUT_MS);
      this.submissions.set(requestId, { resolve, reject, timer, poster });
      const message: PageMessage = {
        source: MESSAGE_SOURCE,
        channel: this.channel,
        type: 'submit',
        requestId,
        fields: [...this.frames.keys()],
        ...(paymentMethodId !== undefined ? { paymentMethodId: paymentMethodId.toLowerCase() } : {}),
      };
      target.postMessage(message, this.serviceOrigin);
    });
  }

  /** Removes the frames and every handler; a pending `submit()` rejects. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    window.removeEventListener('message', this.onMessage);
    for (const field of [...this.frames.keys()]) this.removeField(field);
    this.handlers.clear();
    for (const [requestId, pending] of this.submissions) {
      clearTimeout(pending.timer);
      pending.reject(new Error('SecureFields: destroyed'));
      this.submissions.delete(requestId);
    }
  }

  private addField(field: FieldName, container: HTMLElement | string, options: FieldOptions): void {
    if (this.destroyed) throw new Error('SecureFields: destroyed');
    if (this.frames.has(field)) throw new Error(`SecureFields: the ${field} field was already added`);
    const element = typeof container === 'string' ? document.querySelector<HTMLElement>(container) : container;
    if (!element) throw new Error(`SecureFields: no element ${String(container)} to put the ${field} field in`);
    const src = new URL('secure-fields/frame.html', this.base);
    src.searchParams.set('field', field);
    src.searchParams.set('session', this.sessionId);
    src.searchParams.set('parent', window.location.origin);
    src.searchParams.set('channel', this.channel);
    if (options.placeholder !== undefined)
      src.searchParams.set('placeholder', String(options.placeholder).slice(0, 100));
    const frame = document.createElement('iframe');
    frame.src = src.toString();
    frame.title = TITLES[field];
    frame.setAttribute('data-secure-field', field);
    frame.setAttribute('allowtransparency', 'true');
    frame.setAttribute('scrolling', 'no');
    frame.referrerPolicy = 'no-referrer';
    // The frame's page: 3px around a 40px input (room for its focus ring). `[data-secure-field]` in the page's CSS overrides.
    frame.style.cssText = 'border:0;width:100%;height:46px;display:block;background:transparent;overflow:hidden;';
    this.frames.set(field, frame);
    this.loaded.delete(field);
    this.readyFired = false;
    element.appendChild(frame);
  }

  private readonly onMessage = (event: MessageEvent): void => {
    if (event.origin !== this.serviceOrigin) return;
    const data = event.data as Partial<FrameMessage> | null;
    if (!data || typeof data !== 'object' || data.source !== MESSAGE_SOURCE || data.channel !== this.channel) return;
    const field = 'field' in data ? data.field : undefined;
    const from = [...this.frames.entries()].find(([, frame]) => frame.contentWindow === event.source)?.[0];
    if (!from) return;
    switch (data.type) {
      case 'ready':
        if (field !== from) return;
        this.loaded.add(from);
        if (!this.readyFired && [...this.frames.keys()].every((name) => this.loaded.has(name))) {
          this.readyFired = true;
          this.emit('ready', {});
        }
        return;
      case 'change':
        if (field !== from) return;
        this.emit('change', {
          field: from,
          empty: data.empty === true,
          complete: data.complete === true,
          valid: data.valid === true,
        });
        return;
      case 'blur':
        if (field !== from) return;
        this.emit('blur', { field: from });
        return;
      case 'card-details-changed': {
        if (from !== 'number' || !data.details) return;
        const { country, scheme, cardType, additionalSchemes } = data.details;
        const text = (value: unknown) => (typeof value === 'string' ? value : null);
        this.emit('card-details-changed', {
          country: text(country),
          scheme: text(scheme),
          cardType: text(cardType),
          additionalSchemes: Array.isArray(additionalSchemes)
            ? additionalSchemes.filter((value): value is string => typeof value === 'string')
            : [],
        });
        return;
      }
      case 'submit-result': {
        if (typeof data.requestId !== 'string') return;
        const pending = this.submissions.get(data.requestId);
        if (!pending || pending.poster !== from) return;
        this.submissions.delete(data.requestId);
        clearTimeout(pending.timer);
        if (data.ok === true) pending.resolve();
        else
          pending.reject(
            new Error(
              typeof data.message === 'string' && data.message !== ''
                ? data.message
                : 'The card could not be submitted',
            ),
          );
        return;
      }
      default:
        return;
    }
  };

  private emit<E extends SecureFieldsEventName>(event: E, detail: SecureFieldsEvents[E]): void {
    for (const handler of [...(this.handlers.get(event) ?? [])]) {
      try {
        (handler as (detail: SecureFieldsEvents[E]) => void)(detail);
      } catch (error) {
        // One merchant handler failing must not keep the others from hearing the event.
        setTimeout(() => {
          throw error;
        });
      }
    }
  }
}
