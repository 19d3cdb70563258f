import type { Connector, ConnectorCapabilities } from './connector';
import { timedConnector } from './provider-call-timing';

/**
 * One payment service definition. A real provider is one folder exporting one of these; add it to
 * `connectorDefinitions` in `index.ts` and nothing else changes.
 */
export interface ConnectorDefinition<Config = unknown> {
  /** The payment service definition id, e.g. 'mock-card'. */
  readonly id: string;
  readonly displayName: string;
  /** What the provider can do; a connection can only turn capabilities off, never on. */
  readonly capabilities: ConnectorCapabilities;
  /** The hosts (`host[:port]`) a connection with this configuration may call; the vault's forwarder refuses others. */
  hosts(config: Config): readonly string[];
  /**
   * The provider's own hosts, which its connections call unless their configuration names another (an
   * `api_base_url`): the vault's forwarder allows a card to go to these, to loopback and to the hosts its operator
   * lists (`VAULT_FORWARD_HOSTS`), whatever a caller declares. A `*` stands for any characters within one label.
   */
  readonly providerHosts?: readonly string[];
  create(config: Config): Connector;
}

export class ConnectorRegistry {
  private readonly byId: ReadonlyMap<string, ConnectorDefinition<never>>;

  constructor(definitions: readonly ConnectorDefinition<never>[]) {
    const byId = new Map<string, ConnectorDefinition<never>>();
    for (const definition of definitions) {
      if (byId.has(definition.id)) throw new Error(`duplicate connector definition id "${definition.id}"`);
      // Every connector made from the registry has its provider calls timed (provider-call-timing.ts).
      byId.set(definition.id, {
        ...definition,
        hosts: (config: never) => definition.hosts(config),
        ...(definition.providerHosts ? { providerHosts: definition.providerHosts } : {}),
        create: (config: never) => timedConnector(definition.create(config), definition.id),
      });
    }
    this.byId = byId;
  }

  get(id: string): ConnectorDefinition<never> | undefined {
    return this.byId.get(id);
  }

  list(): readonly ConnectorDefinition<never>[] {
    return [...this.byId.values()];
  }
}

/** The definition's capabilities with a connection's overrides; an override can only turn a capability off. */
export function effectiveCapabilities(
  supported: ConnectorCapabilities,
  overrides: Partial<ConnectorCapabilities> | undefined,
): ConnectorCapabilities {
  const result: { -readonly [K in keyof ConnectorCapabilities]: boolean } = { ...supported };
  for (const key of Object.keys(supported) as (keyof ConnectorCapabilities)[]) {
    result[key] = supported[key] && overrides?.[key] !== false;
  }
  return result;
}
