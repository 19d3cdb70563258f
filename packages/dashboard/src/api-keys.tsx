/**
 * API key pairs: the list, a new key (its private key shown once, here and nowhere else), and revoking one. The server
 * applies the role rules with you as the assigner: as a dashboard user you may give `administrator` and `key-manager`.
 */
import { useState, type FormEvent } from 'react';
import { api, ApiFailure, type Page } from './api';
import { time } from './format';
import { useLoad } from './use-load';

interface Role {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly assignable_to: string[];
}

interface ApiKeyPair {
  readonly id: string;
  readonly display_name: string;
  readonly kid: string;
  readonly roles: Role[];
  readonly merchant_account_ids: string[];
  readonly active: boolean;
  readonly last_used_at: string | null;
  readonly created_at: string;
}

interface CreatedKey extends ApiKeyPair {
  readonly private_key?: string;
}

export function ApiKeysPage({ canWrite }: { canWrite: boolean }) {
  const [keys, reload] = useLoad(() => api.get<Page<ApiKeyPair>>('api-key-pairs'), []);
  const [roles] = useLoad(
    () => api.get<Page<Role>>('roles').catch(() => ({ items: [] as Role[], next_cursor: null, previous_cursor: null })),
    [],
  );
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [accounts, setAccounts] = useState('');
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setCreated(null);
    try {
      const merchantAccountIds = accounts
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean);
      setCreated(
        await api.post<CreatedKey>('api-key-pairs', {
          display_name: name,
          role_ids: chosen,
          merchant_account_ids: merchantAccountIds,
        }),
      );
      setName('');
      setChosen([]);
      reload();
    } catch (error) {
      setProblem(error instanceof ApiFailure ? error.message : String(error));
    }
  };
  const revoke = async (key: ApiKeyPair) => {
    if (!window.confirm(`Revoke ${key.display_name}? Every token signed with it is refused from now on.`)) return;
    await api
      .post(`api-key-pairs/${encodeURIComponent(key.id)}/revoke`)
      .catch((error: unknown) => setProblem(error instanceof Error ? error.message : String(error)));
    reload();
  };
  const assignable =
    roles.state === 'ready' ? roles.value.items.filter((role) => role.assignable_to.includes('api-key-pair')) : [];

  return (
    <section>
      <h1>API keys</h1>
      {canWrite && (
        <form className="create-key" onSubmit={create} aria-label="New API key">
          <h2>New API key</h2>
          <label>
            Name
            <input name="display_name" required value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <fieldset>
            <legend>Roles</legend>
            {assignable.map((role) => (
              <label key={role.id} className="inline">
                <input
                  type="checkbox"
                  name="role"
                  value={role.slug}
                  checked={chosen.includes(role.id)}
                  onChange={(e) =>
                    setChosen(e.target.checked ? [...chosen, role.id] : chosen.filter((id) => id !== role.id))
                  }
                />
                {role.name}
              </label>
            ))}
          </fieldset>
          <label>
            Merchant accounts (comma separated; empty: all)
            <input name="merchant_account_ids" value={accounts} onChange={(e) => setAccounts(e.target.value)} />
          </label>
          <button type="submit">Create</button>
          {problem && (
            <p className="error" role="alert" data-testid="key-error">
              {problem}
            </p>
          )}
        </form>
      )}
      {created?.private_key && (
        <div className="secret" data-testid="created-key">
          <p>
            <strong>{created.display_name}</strong> (kid <span className="mono">{created.kid}</span>): copy its private
            key now. It is not stored anywhere and will not be shown again.
          </p>
          <pre>{created.private_key}</pre>
          <button type="button" onClick={() => setCreated(null)}>
            I have saved it
          </button>
        </div>
      )}
      {keys.state === 'failed' && <p className="error">{keys.message}</p>}
      {keys.state === 'ready' && (
        <table data-testid="api-keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Roles</th>
              <th>Merchant accounts</th>
              <th>Active</th>
              <th>Last used</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.value.items.map((key) => (
              <tr key={key.id} data-key-id={key.id}>
                <td>{key.display_name}</td>
                <td>{key.roles.map((role) => role.slug).join(', ')}</td>
                <td>{key.merchant_account_ids.length > 0 ? key.merchant_account_ids.join(', ') : 'all'}</td>
                <td data-testid="key-active">{key.active ? 'yes' : 'revoked'}</td>
                <td>{key.last_used_at ? time(key.last_used_at) : '—'}</td>
                <td>{time(key.created_at)}</td>
                <td>
                  {canWrite && key.active && (
                    <button type="button" onClick={() => void revoke(key)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
