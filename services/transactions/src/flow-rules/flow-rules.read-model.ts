/**
 * Flow rules per merchant account and flow in evaluation order (action, then position, then oldest first),
 * projected from `flow-rule-<uuid>`. A deleted rule's row is removed; applying an event twice leaves the same row.
 */
import type Database from 'better-sqlite3';
import type { FlowAction, FlowRuleCondition, FlowRuleOutcome, ServedFlow } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import { KeptAnswers, type Projection } from '@switchyard/readmodel';
import type { FlowRuleEvent, FlowRuleView } from './flow-rule';

/** The events `apply` handles: each one may change a list. */
const handledEvents: ReadonlySet<string> = new Set<FlowRuleEvent['type']>([
  'FlowRuleCreated',
  'FlowRuleUpdated',
  'FlowRuleDeleted',
]);

interface FlowRuleRecord {
  id: string;
  merchant_account_id: string;
  flow: string;
  action: string;
  description: string | null;
  position: number;
  conditions: string;
  outcome: string;
  created_at: string;
  updated_at: string;
}

interface ListFilter {
  merchantAccountId: string;
  flow: string;
  action: string | null;
}

export class FlowRulesReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], FlowRuleRecord>;
  private readonly byAccount: Database.Statement<[ListFilter], FlowRuleRecord>;
  private readonly lastPosition: Database.Statement<[ListFilter], { position: number | null }>;
  /** `list`'s answers: every payment asks it, few events change it. */
  private readonly lists: KeptAnswers<readonly FlowRuleView[]>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS flow_rules (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, flow TEXT NOT NULL, action TEXT NOT NULL, description TEXT,
        position INTEGER NOT NULL, conditions TEXT NOT NULL, outcome TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS flow_rules_by_account ON flow_rules (merchant_account_id, flow, action, position, created_at, id);`);
    this.byId = db.prepare('SELECT * FROM flow_rules WHERE id = ?');
    this.byAccount = db.prepare(
      `SELECT * FROM flow_rules WHERE merchant_account_id = @merchantAccountId AND flow = @flow AND (@action IS NULL OR action = @action)
       ORDER BY action, position, created_at, id`,
    );
    this.lastPosition = db.prepare(
      'SELECT MAX(position) AS position FROM flow_rules WHERE merchant_account_id = @merchantAccountId AND flow = @flow AND action = @action',
    );
    const upsert = db.prepare(
      `INSERT OR REPLACE INTO flow_rules (id, merchant_account_id, flow, action, description, position, conditions, outcome, created_at, updated_at)
       VALUES (@id, @merchant_account_id, @flow, @action, @description, @position, @conditions, @outcome, @created_at, @updated_at)`,
    );
    const remove = db.prepare('DELETE FROM flow_rules WHERE id = ?');
    const find = (id: string) => this.find(id);
    const lists = new KeptAnswers<readonly FlowRuleView[]>(db);
    this.lists = lists;

    this.projection = {
      name: 'flow-rules',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as FlowRuleEvent;
        if (handledEvents.has(event.type)) lists.forget();
        switch (event.type) {
          case 'FlowRuleCreated': {
            const { at, ...rule } = event.data;
            upsert.run(toRecord({ ...rule, createdAt: at, updatedAt: at }));
            return;
          }
          case 'FlowRuleUpdated': {
            const row = find(event.data.id);
            if (!row) return;
            const { at, ...changes } = event.data;
            upsert.run(toRecord({ ...row, ...changes, updatedAt: at }));
            return;
          }
          case 'FlowRuleDeleted':
            remove.run(event.data.id);
            return;
          default:
            return;
        }
      },
    };
  }

  /** A rule of any merchant account; null once deleted. */
  find(id: string): FlowRuleView | null {
    const record = this.byId.get(id);
    return record ? toView(record) : null;
  }

  /** A merchant account's rules of a flow in evaluation order, of one action when given. */
  list(merchantAccountId: string, flow: ServedFlow, action?: FlowAction): readonly FlowRuleView[] {
    const filter = { merchantAccountId, flow, action: action ?? null };
    return this.lists.get(JSON.stringify([merchantAccountId, flow, filter.action]), () =>
      this.byAccount.all(filter).map(toView),
    );
  }

  /** The position after the last rule of the action (0 for the first). */
  nextPosition(merchantAccountId: string, flow: ServedFlow, action: FlowAction): number {
    const last = this.lastPosition.get({ merchantAccountId, flow, action })?.position;
    return last === null || last === undefined ? 0 : last + 1;
  }
}

function toRecord(rule: FlowRuleView): FlowRuleRecord {
  return {
    id: rule.id,
    merchant_account_id: rule.merchantAccountId,
    flow: rule.flow,
    action: rule.action,
    description: rule.description,
    position: rule.position,
    conditions: JSON.stringify(rule.conditions),
    outcome: JSON.stringify(rule.outcome),
    created_at: rule.createdAt,
    updated_at: rule.updatedAt,
  };
}

function toView(record: FlowRuleRecord): FlowRuleView {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    flow: record.flow as ServedFlow,
    action: record.action as FlowAction,
    description: record.description,
    position: record.position,
    conditions: JSON.parse(record.conditions) as FlowRuleCondition[],
    outcome: JSON.parse(record.outcome) as FlowRuleOutcome,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
