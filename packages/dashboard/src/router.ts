/** Hash routes (`/dashboard#/transactions/<id>`): the server serves one page, the browser keeps the place in its history. */
import { useEffect, useState } from 'react';

export type Route =
  | { readonly page: 'transactions' }
  | { readonly page: 'transaction'; readonly id: string }
  | { readonly page: 'webhooks' }
  | { readonly page: 'subscription'; readonly id: string }
  | { readonly page: 'api-keys' }
  | { readonly page: 'chart' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'transactions' && parts[1]) return { page: 'transaction', id: parts[1] };
  if (parts[0] === 'webhooks' && parts[1]) return { page: 'subscription', id: parts[1] };
  if (parts[0] === 'webhooks') return { page: 'webhooks' };
  if (parts[0] === 'api-keys') return { page: 'api-keys' };
  if (parts[0] === 'chart') return { page: 'chart' };
  return { page: 'transactions' };
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}
