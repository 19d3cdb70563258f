/**
 * The pure rules of a card authorization's set-up: which connections to try and in what order (flow rules,
 * failover), whether 3-D Secure runs (spec, "Issuer-mandated 3-D Secure"), which 3-D Secure configuration of the
 * merchant account applies, and which provider answers move on to the next connection. No I/O: the slice feeds them
 * what it read.
 */
import type { ThreeDsConfiguration } from '@switchyard/contracts';
import type { FlowDecision } from '../flow-rules/card-transaction-flow';
import type { FlowActionRecord, ProviderError } from './transaction';
import type { AuthorizationResult } from './transaction.decide';

export const noFlowDecision: FlowDecision = { route: null, declineEarly: null, skip3ds: null, force3ds: null };

export interface ThreeDSecureFacts {
  /** The connection tried first has 3-D Secure turned on (`three_d_secure_enabled`). */
  readonly connectionEnabled: boolean;
  readonly flow: Pick<FlowDecision, 'skip3ds' | 'force3ds'>;
  /** From BIN data: true for EEA and UK issuers, false for other known issuers, null when it cannot tell. */
  readonly issuerMandate: boolean | null;
  /** The environment's switch (ISSUER_MANDATED_3DS). */
  readonly issuerMandateEnabled: boolean;
  /** `three_d_secure_data` came with the request: authentication was done elsewhere and is passed through. */
  readonly externalData: boolean;
}

export type ThreeDSecureReason =
  | 'connection_disabled'
  | 'external_data'
  | 'forced'
  | 'issuer_mandated'
  | 'skipped'
  | 'connection_enabled';

export interface ThreeDSecurePlan {
  readonly run: boolean;
  readonly reason: ThreeDSecureReason;
  /** A skip rule matched and was overridden because the issuer mandates authentication. */
  readonly skipOverridden: boolean;
}

/**
 * Spec, "Issuer-mandated 3-D Secure": a connection with 3-D Secure off never runs it; a force rule forces it; an
 * issuer known to mandate authentication gets it even when a skip rule matched (the rule is still recorded as
 * matched); when the issuer's requirement cannot be determined the configured behaviour (the skip rule) applies.
 */
export function planThreeDSecure(facts: ThreeDSecureFacts): ThreeDSecurePlan {
  const plan = (run: boolean, reason: ThreeDSecureReason, skipOverridden = false): ThreeDSecurePlan => ({
    run,
    reason,
    skipOverridden,
  });
  if (!facts.connectionEnabled) return plan(false, 'connection_disabled');
  if (facts.externalData) return plan(false, 'external_data');
  if (facts.flow.force3ds) return plan(true, 'forced');
  if (facts.flow.skip3ds) {
    if (facts.issuerMandateEnabled && facts.issuerMandate === true) return plan(true, 'issuer_mandated', true);
    return plan(false, 'skipped');
  }
  return plan(true, 'connection_enabled');
}

/** The matched rules as the transaction records them (`GET /transactions/{id}/actions`). */
export function flowActionRecords(
  flow: FlowDecision,
  threeDSecure: ThreeDSecurePlan | null,
  routeBypassed: boolean,
): FlowActionRecord[] {
  const records: FlowActionRecord[] = [];
  if (flow.route)
    records.push({
      ruleId: flow.route.ruleId,
      action: 'route-transaction',
      outcome: {
        result: [...flow.route.paymentServiceIds],
        ...(routeBypassed ? { bypassed_by: 'payment_service_id' } : {}),
      },
    });
  if (flow.declineEarly)
    records.push({ ruleId: flow.declineEarly.ruleId, action: 'decline-early', outcome: { result: true } });
  if (flow.force3ds) records.push({ ruleId: flow.force3ds.ruleId, action: 'force-3ds', outcome: { result: true } });
  if (flow.skip3ds) {
    const overridden = threeDSecure?.skipOverridden === true;
    records.push({
      ruleId: flow.skip3ds.ruleId,
      action: 'skip-3ds',
      outcome: {
        result: true,
        applied: !overridden && threeDSecure?.reason === 'skipped',
        ...(overridden ? { overridden_by: 'issuer_mandated_3ds' } : {}),
      },
    });
  }
  return records;
}

/**
 * The merchant account's 3-D Secure configuration for a card scheme and currency: an exact scheme beats "any
 * scheme", an exact currency beats "any currency", the oldest wins a tie. Null: none applies (3-D Secure cannot be
 * set up).
 */
export function threeDsConfigurationFor(
  configurations: readonly ThreeDsConfiguration[],
  scheme: string | null,
  currency: string,
): ThreeDsConfiguration | null {
  const score = (c: ThreeDsConfiguration): number => {
    if ((c.scheme !== null && c.scheme !== scheme) || (c.currency !== null && c.currency !== currency)) return -1;
    return (c.scheme !== null ? 2 : 0) + (c.currency !== null ? 1 : 0);
  };
  const candidates = configurations.filter((c) => score(c) >= 0);
  candidates.sort((a, b) => score(b) - score(a) || a.created_at.localeCompare(b.created_at));
  return candidates[0] ?? null;
}

/**
 * Technical failures, and declines that are about the payment service rather than the card: the next connection
 * may succeed. An issuer's decline (insufficient funds, suspected fraud, ...) is never retried elsewhere, nor is an
 * unknown outcome (the money may have moved).
 */
const failoverFailures = new Set([
  'service_unavailable',
  'service_error',
  'service_network_error',
  'service_rate_limit',
  'internal_error',
  'invalid_service_response',
  'invalid_service_configuration',
  'invalid_service_credentials',
  'insufficient_service_permissions',
  'unknown_error',
]);
const failoverDeclines = new Set([
  'service_decline',
  'unsupported_transaction',
  'unsupported_payment_method',
  'incorrect_currency',
  'incorrect_country',
]);

export function isFailoverCandidate(
  result: AuthorizationResult,
): result is Extract<AuthorizationResult, { outcome: 'failed' | 'declined' }> & { error: ProviderError } {
  if (result.outcome === 'failed') return failoverFailures.has(result.error.errorCode);
  if (result.outcome === 'declined') return failoverDeclines.has(result.error.errorCode);
  return false;
}
