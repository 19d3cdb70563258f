/**
 * The dashboard's calls to its backend (`/dashboard/api/...`, same origin): the session cookie goes by itself
 * (HttpOnly: this code never sees it); every state-changing call carries the session's CSRF token in `x-csrf-token`.
 */

export interface ErrorBody {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly details?: ReadonlyArray<{ readonly pointer?: string; readonly message: string }>;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | null,
  ) {
    super(
      body
        ? `${body.message}${body.details?.length ? `: ${body.details.map((detail) => `${detail.pointer ?? ''} ${detail.message}`.trim()).join('; ')}` : ''}`
        : `HTTP ${status}`,
    );
  }
}

export type Query = Readonly<Record<string, string | number | readonly string[] | undefined | null>>;

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

/** The session's CSRF token (from sign-in or `GET /session`), and what to do when the session has ended (401). */
export function bindSession(token: string, signedOut: () => void): void {
  csrfToken = token;
  onSignedOut = signedOut;
}

const url = (path: string, query: Query = {}): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  const search = params.toString();
  return `/dashboard/api/${path}${search ? `?${search}` : ''}`;
};

async function send<T>(method: 'GET' | 'POST', path: string, query?: Query, body?: unknown): Promise<T> {
  const response = await fetch(url(path, query), {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(method === 'POST' ? { 'content-type': 'application/json', 'x-csrf-token': csrfToken } : {}),
    },
    ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const json: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    if (response.status === 401 && path !== 'login') onSignedOut();
    throw new ApiFailure(response.status, json as ErrorBody | null);
  }
  return json as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => send<T>('GET', path, query),
  post: <T>(path: string, body?: unknown, query?: Query) => send<T>('POST', path, query, body),
};

export interface Page<T> {
  readonly items: T[];
  readonly next_cursor: string | null;
  readonly previous_cursor: string | null;
}
