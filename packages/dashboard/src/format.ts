/** How the dashboard shows money, times and statuses. */

const digitsOf = (currency: string): number => {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
};

/** An amount in minor units, as `$12.99` / `12.99 EUR`. */
export function money(amount: number, currency: string): string {
  const digits = digitsOf(currency);
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount / 10 ** digits);
  } catch {
    return `${(amount / 10 ** digits).toFixed(digits)} ${currency}`;
  }
}

/** A timestamp in the viewer's time zone, to the second (milliseconds for a timeline). */
export function time(iso: string, withMilliseconds = false): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const base = date.toLocaleString('en-GB', {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return withMilliseconds ? `${base}.${String(date.getMilliseconds()).padStart(3, '0')}` : base;
}

/** `authorization_succeeded` → `authorization succeeded`. */
export const words = (value: string): string => value.replace(/[_-]+/g, ' ');

/** A `datetime-local` input's value as an ISO date-time (the viewer's time zone); undefined when empty or invalid. */
export function isoFromLocal(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
