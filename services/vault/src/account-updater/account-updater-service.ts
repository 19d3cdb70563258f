/**
 * Which account updater service the vault talks to: the simulator's (it lives with the card
 * simulator, `ProviderSettings.mockCard`), or none — then every call fails as an unreachable service would, so jobs
 * wait (`created`) and are submitted once one is configured and the process restarted.
 */
import {
  ConnectorUnavailableError,
  SimulatorAccountUpdaterService,
  type AccountUpdaterService,
} from '@switchyard/connectors';

/** Where the simulator is (the transactions service's `ProviderSettings`). */
export interface AccountUpdaterProviders {
  readonly mockCard?: { readonly baseUrl: string; readonly timeoutMs?: number };
}

export function accountUpdaterServiceFor(providers: AccountUpdaterProviders | undefined): AccountUpdaterService {
  const simulator = providers?.mockCard;
  if (simulator)
    return new SimulatorAccountUpdaterService({
      baseUrl: simulator.baseUrl,
      ...(simulator.timeoutMs !== undefined && { timeoutMs: simulator.timeoutMs }),
    });
  const unavailable = async (): Promise<never> => {
    throw new ConnectorUnavailableError('no account updater service is configured (MOCK_CARD_URL)', true);
  };
  return { submit: unavailable, results: unavailable };
}
