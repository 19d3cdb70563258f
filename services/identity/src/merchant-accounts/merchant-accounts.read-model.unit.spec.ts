import BetterSqlite3 from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import { defaultMerchantAccountSettings, type MerchantAccountEvent } from './merchant-account';
import { MerchantAccountsReadModel } from './merchant-accounts.read-model';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';

let position = 0;
const recorded = (event: MerchantAccountEvent): RecordedEvent => {
  position += 1;
  return {
    id: `event-${position}`,
    streamId: `merchant-account-${event.data.id}`,
    type: event.type,
    data: event.data,
    metadata: {},
    revision: 0,
    position: String(position),
    recordedAt: now,
  };
};

/** The settings of a `MerchantAccountCreated` recorded before `multipleCapturesEnabled` existed. */
const { multipleCapturesEnabled: _absent, ...settingsBeforeMultipleCaptures } = defaultMerchantAccountSettings;

describe('the merchant accounts read model', () => {
  let db: BetterSqlite3.Database;
  let readModel: MerchantAccountsReadModel;
  const apply = (...events: MerchantAccountEvent[]) => {
    for (const event of events) readModel.projection.apply(recorded(event), db);
  };

  beforeEach(() => {
    db = new BetterSqlite3(':memory:');
    readModel = new MerchantAccountsReadModel(db);
  });
  afterEach(() => db.close());

  it('folds accounts created before multiple captures existed to false', () => {
    apply(
      { type: 'MerchantAccountCreated', data: { id: 'default', displayName: 'Default', at: now } },
      {
        type: 'MerchantAccountCreated',
        data: { id: 'older', displayName: 'Older', settings: settingsBeforeMultipleCaptures as never, at: now },
      },
      { type: 'MerchantAccountUpdated', data: { id: 'older', overCaptureAmount: 10, at: later } },
    );
    expect(readModel.find('default')?.multipleCapturesEnabled).toBe(false);
    expect(readModel.find('older')).toMatchObject({ multipleCapturesEnabled: false, overCaptureAmount: 10 });
  });

  it('keeps multiple captures as created and as toggled', () => {
    apply({
      type: 'MerchantAccountCreated',
      data: {
        id: 'shop',
        displayName: 'Shop',
        settings: { ...defaultMerchantAccountSettings, multipleCapturesEnabled: true },
        at: now,
      },
    });
    expect(readModel.find('shop')?.multipleCapturesEnabled).toBe(true);
    apply({ type: 'MerchantAccountUpdated', data: { id: 'shop', multipleCapturesEnabled: false, at: later } });
    expect(readModel.find('shop')).toMatchObject({ multipleCapturesEnabled: false, updatedAt: later });
    apply({ type: 'MerchantAccountUpdated', data: { id: 'shop', multipleCapturesEnabled: true, at: later } });
    expect(readModel.list({ limit: 10 }).items.map((row) => [row.id, row.multipleCapturesEnabled])).toEqual([
      ['shop', true],
    ]);
  });

  it('folds accounts created before network tokens existed to off, without Discover ids, and keeps them as changed', () => {
    const {
      networkTokensEnabled: _on,
      discoverNetworkTokensRequestorId: _req,
      discoverNetworkTokensAppId: _app,
      ...settingsBeforeNetworkTokens
    } = defaultMerchantAccountSettings;
    apply(
      {
        type: 'MerchantAccountCreated',
        data: { id: 'older', displayName: 'Older', settings: settingsBeforeNetworkTokens as never, at: now },
      },
      {
        type: 'MerchantAccountCreated',
        data: {
          id: 'tokens',
          displayName: 'Tokens',
          settings: { ...defaultMerchantAccountSettings, networkTokensEnabled: true },
          at: now,
        },
      },
    );
    expect(readModel.find('older')).toMatchObject({
      networkTokensEnabled: false,
      discoverNetworkTokensRequestorId: null,
      discoverNetworkTokensAppId: null,
    });
    expect(readModel.find('tokens')?.networkTokensEnabled).toBe(true);
    apply({
      type: 'MerchantAccountUpdated',
      data: {
        id: 'older',
        networkTokensEnabled: true,
        discoverNetworkTokensRequestorId: 'disc-req',
        discoverNetworkTokensAppId: 'disc-app',
        at: later,
      },
    });
    expect(readModel.find('older')).toMatchObject({
      networkTokensEnabled: true,
      discoverNetworkTokensRequestorId: 'disc-req',
      discoverNetworkTokensAppId: 'disc-app',
    });
    apply({
      type: 'MerchantAccountUpdated',
      data: { id: 'older', networkTokensEnabled: false, discoverNetworkTokensAppId: null, at: later },
    });
    expect(readModel.find('older')).toMatchObject({
      networkTokensEnabled: false,
      discoverNetworkTokensRequestorId: 'disc-req',
      discoverNetworkTokensAppId: null,
    });
  });

  it('rebuilds beside the v3 table from before network tokens, under its own projection name', () => {
    const old = new BetterSqlite3(':memory:');
    try {
      old.exec(
        'CREATE TABLE merchant_accounts_v3 (id TEXT PRIMARY KEY, display_name TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)',
      );
      const rebuilt = new MerchantAccountsReadModel(old);
      expect(rebuilt.projection.name).toBe('merchant-accounts-v4');
      rebuilt.projection.apply(
        recorded({ type: 'MerchantAccountCreated', data: { id: 'default', displayName: 'Default', at: now } }),
        old,
      );
      expect(rebuilt.find('default')?.networkTokensEnabled).toBe(false);
    } finally {
      old.close();
    }
  });

  it('rebuilds beside a v2 table from before the column, under its own projection name', () => {
    const old = new BetterSqlite3(':memory:');
    try {
      old.exec(
        'CREATE TABLE merchant_accounts_v2 (id TEXT PRIMARY KEY, display_name TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)',
      );
      old.exec(`INSERT INTO merchant_accounts_v2 VALUES ('default', 'Default', '${now}', '${now}')`);
      const rebuilt = new MerchantAccountsReadModel(old);
      expect(rebuilt.projection.name).not.toBe('merchant-accounts-v2');
      expect(rebuilt.find('default')).toBeNull();
      rebuilt.projection.apply(
        recorded({ type: 'MerchantAccountCreated', data: { id: 'default', displayName: 'Default', at: now } }),
        old,
      );
      expect(rebuilt.find('default')?.multipleCapturesEnabled).toBe(false);
      expect(old.prepare('SELECT count(*) AS n FROM merchant_accounts_v2').get()).toEqual({ n: 1 });
    } finally {
      old.close();
    }
  });
});
