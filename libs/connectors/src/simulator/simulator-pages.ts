/**
 * The simulator's HTML pages, where a buyer's browser (or a test's plain `fetch`) acts: the 3-D Secure challenge
 * and the redirect wallet's approval. Self-contained, no script: each is one form that POSTs back to its own URL.
 */

export function challengePage(a: {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
  readonly merchantName: string;
}): string {
  return page(
    '3-D Secure challenge',
    `<p>Confirm the payment of <strong>${formatAmount(a.amount, a.currency)}</strong> to <strong>${escapeHtml(a.merchantName)}</strong>.</p>
<form method="post" action="/v1/3ds/challenges/${encodeURIComponent(a.id)}">
<button type="submit" name="result" value="Y">Authenticate</button>
<button type="submit" name="result" value="N">Fail authentication</button>
</form>`,
  );
}

export function approvalPage(a: {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
  readonly method: string;
}): string {
  return page(
    'Approve your payment',
    `<p>Pay <strong>${formatAmount(a.amount, a.currency)}</strong> with <strong>${escapeHtml(a.method)}</strong>.</p>
<form method="post" action="/v1/approvals/${encodeURIComponent(a.id)}">
<button type="submit" name="decision" value="approve">Pay with PayPal</button>
<button type="submit" name="decision" value="cancel">Cancel and return</button>
</form>`,
  );
}

export function errorPage(code: string, message: string): string {
  return page('Simulator error', `<p><code>${escapeHtml(code)}</code>: ${escapeHtml(message)}</p>`);
}

/** Minor units with the currency's own exponent: 1299 USD → `12.99 USD`, 1299 JPY → `1299 JPY`. */
export function formatAmount(amount: number, currency: string): string {
  const digits =
    new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return `${(amount / 10 ** digits).toFixed(digits)} ${escapeHtml(currency)}`;
}

function page(title: string, content: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1>
${content}
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
