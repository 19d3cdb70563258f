/** The operator dashboard: sign-in, then transactions, webhooks, API keys and the authorization chart of one merchant account. */
import { StrictMode, useEffect, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { api, ApiFailure, bindSession, type Page } from './api';
import { ApiKeysPage } from './api-keys';
import { ChartPage } from './chart';
import { href, useRoute, type Route } from './router';
import { may, type SessionInfo } from './session';
import { TransactionPage } from './transaction';
import { TransactionsPage } from './transactions';
import { SubscriptionPage, WebhooksPage } from './webhooks';

type SessionState =
  | { readonly state: 'checking' }
  | { readonly state: 'signed-out'; readonly notice?: string }
  | { readonly state: 'signed-in'; readonly session: SessionInfo };

function App() {
  const [session, setSession] = useState<SessionState>({ state: 'checking' });
  const signedOut = (notice?: string) => setSession({ state: 'signed-out', ...(notice ? { notice } : {}) });
  const signedIn = (info: SessionInfo) => {
    bindSession(info.csrf_token, () => signedOut('Your session has ended: sign in again.'));
    setSession({ state: 'signed-in', session: info });
  };
  useEffect(() => {
    api.get<SessionInfo>('session').then(signedIn, () => signedOut());
  }, []);

  if (session.state === 'checking') return <p className="muted">Loading…</p>;
  if (session.state === 'signed-out') return <SignIn notice={session.notice} onSignedIn={signedIn} />;
  return <Signed session={session.session} onSignedOut={() => signedOut('You have signed out.')} />;
}

function SignIn({ notice, onSignedIn }: { notice?: string | undefined; onSignedIn: (info: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await api.post<SessionInfo>('login', { email, password }));
    } catch (error) {
      setProblem(error instanceof ApiFailure && error.body ? error.body.message : 'Signing in failed');
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <h1>Switchyard</h1>
      <form onSubmit={submit} aria-label="Sign in">
        {notice && <p className="notice">{notice}</p>}
        <label>
          Email
          <input
            name="email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {problem && (
          <p className="error" role="alert" data-testid="sign-in-error">
            {problem}
          </p>
        )}
      </form>
    </main>
  );
}

interface MerchantAccount {
  readonly id: string;
  readonly display_name: string;
}

function Signed({ session, onSignedOut }: { session: SessionInfo; onSignedOut: () => void }) {
  const route = useRoute();
  const [account, setAccount] = useState('default');
  const [accounts, setAccounts] = useState<MerchantAccount[]>([{ id: 'default', display_name: 'Default' }]);
  useEffect(() => {
    if (!may(session, 'merchant-accounts.read')) return;
    api.get<Page<MerchantAccount>>('merchant-accounts').then(
      (page) => page.items.length > 0 && setAccounts(page.items),
      () => undefined,
    );
  }, [session]);
  const signOut = async () => {
    await api.post('logout').catch(() => undefined);
    onSignedOut();
  };
  const links: Array<[Route['page'], string, string, string]> = [
    ['transactions', 'Transactions', href('transactions'), 'transactions.read'],
    ['webhooks', 'Webhooks', href('webhooks'), 'webhook-subscriptions.read'],
    ['api-keys', 'API keys', href('api-keys'), 'api-key-pairs.read'],
    ['chart', 'Authorizations', href('chart'), 'transactions.read'],
  ];
  const section =
    route.page === 'transaction' ? 'transactions' : route.page === 'subscription' ? 'webhooks' : route.page;
  return (
    <>
      <header>
        <strong>Switchyard</strong>
        <nav>
          {links
            .filter(([, , , scope]) => may(session, scope))
            .map(([page, label, target]) => (
              <a key={page} href={target} className={section === page ? 'current' : ''}>
                {label}
              </a>
            ))}
        </nav>
        <label className="account">
          Merchant account
          <select value={account} onChange={(e) => setAccount(e.target.value)} data-testid="merchant-account">
            {accounts.map((one) => (
              <option key={one.id} value={one.id}>
                {one.display_name} ({one.id})
              </option>
            ))}
          </select>
        </label>
        <span className="who" data-testid="signed-in-as">
          {session.user.display_name} · {session.user.roles.map((role) => role.slug).join(', ')}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <Content route={route} account={account} session={session} />
      </main>
    </>
  );
}

function Content({ route, account, session }: { route: Route; account: string; session: SessionInfo }) {
  switch (route.page) {
    case 'transactions':
      return <TransactionsPage account={account} session={session} />;
    case 'transaction':
      return <TransactionPage account={account} id={route.id} />;
    case 'webhooks':
      return <WebhooksPage account={account} />;
    case 'subscription':
      return (
        <SubscriptionPage account={account} id={route.id} canReplay={may(session, 'webhook-subscriptions.write')} />
      );
    case 'api-keys':
      return <ApiKeysPage canWrite={may(session, 'api-key-pairs.write')} />;
    case 'chart':
      return <ChartPage account={account} session={session} />;
  }
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
