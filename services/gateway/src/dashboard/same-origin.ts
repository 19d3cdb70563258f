/**
 * The same-origin half of the dashboard's CSRF defence (the other half is the session's token in `x-csrf-token`): a
 * state-changing request must say it comes from a page of the dashboard's own origin. Browsers send `Origin` on every
 * cross-origin request and on same-origin POSTs, and `Sec-Fetch-Site` on every request (all current engines); a
 * request with neither did not come from a browser page we can vouch for, and is refused too.
 */
import type { IncomingHttpHeaders } from 'node:http';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/** Why the request is not from the dashboard's own origin; null when it is. `ownOrigins`: lower-case `scheme://host[:port]`. */
export function crossOriginProblem(headers: IncomingHttpHeaders, ownOrigins: readonly string[]): string | null {
  const fetchSite = header(headers, 'sec-fetch-site');
  const origin = header(headers, 'origin');
  if (fetchSite !== undefined && fetchSite !== 'same-origin')
    return `a request from another site (Sec-Fetch-Site: ${fetchSite}) cannot change anything here`;
  if (origin !== undefined && !ownOrigins.includes(origin.toLowerCase()))
    return 'a request from another origin cannot change anything here';
  if (origin === undefined && fetchSite === undefined)
    return 'a state-changing request must carry Origin or Sec-Fetch-Site';
  return null;
}

/** `scheme://host[:port]` of a URL, lower-case; undefined when it is not one. */
export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin.toLowerCase();
  } catch {
    return undefined;
  }
}
