/**
 * The demo checkout's merchant page: plain HTML and one small module script, no framework. It asks the demo backend
 * for a checkout session and an embed token, loads the secure fields module from the service, renders the three
 * fields (iframes on the service's origin), lists the `card-details-changed` events it receives (also in
 * `window.__cardDetailsEvents`), and pays: `secure.submit()` attaches the card to the session from inside the frames,
 * then `POST /transactions` pays with the session and the embed token.
 *
 * The page holds no card data: the browser's same-origin policy keeps its JavaScript out of the frames, as long as
 * the page is opened on another origin than the service (`http://localhost:<port>` against `http://127.0.0.1:<port>`).
 */

export interface DemoPageOptions {
  /** Where the secure fields are served. */
  readonly serviceUrl: string;
  /** A fresh random value per response: the Content-Security-Policy nonce of the page's own script. */
  readonly nonce: string;
}

/**
 * The page's Content-Security-Policy: its own nonce'd script and the secure fields module, frames from the service
 * only, requests to its own origin (the demo backend and `POST /transactions`) and the service.
 */
export function demoPageContentSecurityPolicy({ serviceUrl, nonce }: DemoPageOptions): string {
  const service = new URL(serviceUrl).origin;
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' ${service}`,
    // Not nonce'd: a nonce would turn 'unsafe-inline' off, and with it style attributes a field library may set.
    "style-src 'self' 'unsafe-inline'",
    `frame-src ${service}`,
    `connect-src 'self' ${service}`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Another host name for the same server, so that the page and the frames are different origins. */
export function otherOriginUrl(serviceUrl: string): string | null {
  const url = new URL(serviceUrl);
  if (url.hostname === '127.0.0.1' || url.hostname === '[::1]') url.hostname = 'localhost';
  else if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
  else return null;
  return `${url.origin}/demo/checkout`;
}

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character] as string,
  );

/** JSON inside a `<script>`: no `</script>` or `<!--` can end it early. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

export function renderDemoCheckoutPage(options: DemoPageOptions): string {
  const { serviceUrl, nonce } = options;
  const suggested = otherOriginUrl(serviceUrl);
  const openAs = suggested
    ? `Open it as <a href="${escapeHtml(suggested)}">${escapeHtml(suggested)}</a>`
    : `Open it on another host name than <code>${escapeHtml(new URL(serviceUrl).host)}</code>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchyard demo checkout</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1d2330; }
  main { max-width: 34rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
  .note { font-size: .85rem; color: #5b6475; }
  .warning { background: #fff4e5; border: 1px solid #f0b35a; padding: .5rem .75rem; border-radius: 8px; }
  .amount { font-size: 1.6rem; font-weight: 600; margin: 1rem 0; }
  .field-label { display: block; font-size: .85rem; font-weight: 600; margin-top: .75rem; }
  .field { min-height: 46px; }
  .row { display: flex; gap: 1rem; }
  .row > div { flex: 1; }
  button { margin-top: 1.25rem; width: 100%; padding: .75rem; font-size: 1rem; font-weight: 600; border: 0; border-radius: 8px; background: #2451d6; color: #fff; cursor: pointer; }
  button:disabled { background: #9aa8d6; cursor: default; }
  dl { display: grid; grid-template-columns: 6rem 1fr; gap: .25rem .75rem; margin: 0; }
  dt { color: #5b6475; }
  dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
  ol { padding-left: 1.5rem; font-family: ui-monospace, monospace; font-size: .85rem; overflow-wrap: anywhere; }
  #message[data-kind="error"] { color: #b3261e; }
</style>
</head>
<body>
<main>
  <h1>Demo checkout</h1>
  <p class="note">This page plays a merchant's checkout: the card fields below are iframes served by Switchyard at
    <code>${escapeHtml(serviceUrl)}</code>, so card data goes from them straight to the service and never reaches this
    page. ${openAs} so that this page and the fields are different origins.</p>
  <p class="note warning" id="same-origin-warning" hidden>This page is open on the same origin as the secure fields:
    the browser would let its JavaScript read them. ${openAs}.</p>

  <div class="amount" id="amount" data-testid="amount">…</div>

  <form id="checkout" novalidate>
    <span class="field-label" id="card-number-label">Card number</span>
    <div class="field" id="card-number"></div>
    <div class="row">
      <div><span class="field-label" id="expiry-date-label">Expiry date</span><div class="field" id="expiry-date"></div></div>
      <div><span class="field-label" id="security-code-label">Security code</span><div class="field" id="security-code"></div></div>
    </div>
    <button type="submit" id="pay" disabled>Pay</button>
  </form>
  <p id="message" role="status" aria-live="polite">Opening a checkout session…</p>

  <h2>Transaction</h2>
  <dl>
    <dt>Status</dt><dd id="transaction-status" data-testid="transaction-status">—</dd>
    <dt>Id</dt><dd id="transaction-id" data-testid="transaction-id">—</dd>
  </dl>

  <h2><code>card-details-changed</code> events</h2>
  <ol id="card-details-events" data-testid="card-details-events"></ol>
  <p class="note">Test cards and the amounts the card simulator declines: docs/simulator.md.</p>
</main>
<script type="module" nonce="${nonce}">
const serviceUrl = ${scriptJson(serviceUrl)};
const $ = (id) => document.getElementById(id);
const events = [];
window.__cardDetailsEvents = events;
document.body.dataset.state = 'loading';

const say = (text, kind = 'info') => { $('message').textContent = text; $('message').dataset.kind = kind; };
const fail = (error) => { document.body.dataset.state = 'failed'; say(error instanceof Error ? error.message : String(error), 'error'); };

async function call(url, init) {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init && init.headers) } });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error((body && body.message) || 'HTTP ' + response.status);
  return body;
}

function showTransaction(transaction) {
  $('transaction-status').textContent = transaction.status;
  $('transaction-id').textContent = transaction.id;
  document.body.dataset.transactionStatus = transaction.status;
}

if (location.origin === new URL(serviceUrl).origin) $('same-origin-warning').hidden = false;

async function start() {
  const checkout = await call('/demo/checkout/session', { method: 'POST', body: '{}' });
  $('amount').textContent = new Intl.NumberFormat('en', { style: 'currency', currency: checkout.currency }).format(checkout.amount / 100);
  const { SecureFields } = await import(checkout.serviceUrl + '/secure-fields/secure-fields.js');
  const secure = new SecureFields({ serviceUrl: checkout.serviceUrl, sessionId: checkout.sessionId });

  secure.on('card-details-changed', (detail) => {
    const received = { country: detail.country, scheme: detail.scheme, cardType: detail.cardType, additionalSchemes: detail.additionalSchemes };
    events.push(received);
    const item = document.createElement('li');
    item.textContent = JSON.stringify(received);
    $('card-details-events').append(item);
  });
  secure.on('ready', () => {
    $('pay').disabled = false;
    document.body.dataset.state = 'ready';
    say('Enter a card and pay.');
  });

  secure.addCardNumberField('#card-number');
  secure.addExpiryDateField('#expiry-date', { placeholder: 'MM/YY' });
  secure.addSecurityCodeField('#security-code');

  $('checkout').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('pay').disabled = true;
    document.body.dataset.state = 'paying';
    try {
      say('Sending the card to the service…');
      await secure.submit();
      say('Paying…');
      const created = await call('/transactions', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + checkout.token },
        body: JSON.stringify({ amount: checkout.amount, currency: checkout.currency, payment_method: { method: 'checkout-session', id: checkout.sessionId } }),
      });
      showTransaction(created);
      // The merchant's server reads the outcome back with its own credentials; a pending one settles shortly.
      let confirmed = await call('/demo/checkout/transactions/' + created.id);
      for (let attempt = 0; attempt < 20 && (confirmed.status === 'processing' || confirmed.status === 'authorization_pending'); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        confirmed = await call('/demo/checkout/transactions/' + created.id);
      }
      showTransaction(confirmed);
      document.body.dataset.state = 'done';
      say('Payment ' + confirmed.status.replace(/_/g, ' ') + '.');
    } catch (error) {
      fail(error);
      $('pay').disabled = false;
    }
  });
}

start().catch(fail);
</script>
</body>
</html>
`;
}
