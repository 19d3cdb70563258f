import type { ThreeDsConfiguration } from '@switchyard/contracts';
import type { FlowDecision } from '../flow-rules/card-transaction-flow';
import {
  flowActionRecords,
  isFailoverCandidate,
  noFlowDecision,
  planThreeDSecure,
  threeDsConfigurationFor,
} from './authorization-policy';

const skip = { ruleId: 'rule-skip', action: 'skip-3ds' } as const;
const force = { ruleId: 'rule-force', action: 'force-3ds' } as const;
const rules = {
  none: { skip3ds: null, force3ds: null },
  skip: { skip3ds: skip, force3ds: null },
  force: { skip3ds: null, force3ds: force },
} as const;
const issuers = { 'EEA/UK': true, US: false, unknown: null } as const;

describe('planThreeDSecure: the spec rules of issuer-mandated 3-D Secure', () => {
  // {issuer} × {rule} × {connection 3-D Secure}: whether it runs, and whether a matched skip rule was overridden.
  const table = [
    ['EEA/UK', 'none', true, true, false],
    ['EEA/UK', 'skip', true, true, true],
    ['EEA/UK', 'force', true, true, false],
    ['US', 'none', true, true, false],
    ['US', 'skip', true, false, false],
    ['US', 'force', true, true, false],
    ['unknown', 'none', true, true, false],
    ['unknown', 'skip', true, false, false],
    ['unknown', 'force', true, true, false],
    ['EEA/UK', 'none', false, false, false],
    ['EEA/UK', 'skip', false, false, false],
    ['EEA/UK', 'force', false, false, false],
    ['US', 'none', false, false, false],
    ['US', 'skip', false, false, false],
    ['US', 'force', false, false, false],
    ['unknown', 'none', false, false, false],
    ['unknown', 'skip', false, false, false],
    ['unknown', 'force', false, false, false],
  ] as const;

  it.each(table)(
    '%s issuer, %s rule, connection 3-D Secure %s → runs %s (skip overridden %s)',
    (issuer, rule, enabled, runs, overridden) => {
      const plan = planThreeDSecure({
        connectionEnabled: enabled,
        flow: rules[rule],
        issuerMandate: issuers[issuer],
        issuerMandateEnabled: true,
        externalData: false,
      });
      expect(plan.run).toBe(runs);
      expect(plan.skipOverridden).toBe(overridden);
    },
  );

  it('follows the skip rule for every issuer when the environment switches the feature off', () => {
    for (const issuer of Object.values(issuers)) {
      expect(
        planThreeDSecure({
          connectionEnabled: true,
          flow: rules.skip,
          issuerMandate: issuer,
          issuerMandateEnabled: false,
          externalData: false,
        }),
      ).toEqual({ run: false, reason: 'skipped', skipOverridden: false });
    }
  });

  it('never runs its own authentication when external three_d_secure_data came with the request', () => {
    expect(
      planThreeDSecure({
        connectionEnabled: true,
        flow: rules.force,
        issuerMandate: true,
        issuerMandateEnabled: true,
        externalData: true,
      }).run,
    ).toBe(false);
  });

  it('records a matched skip rule in every case, saying when it was overridden', () => {
    const flow: FlowDecision = { ...noFlowDecision, skip3ds: skip };
    const overridden = planThreeDSecure({
      connectionEnabled: true,
      flow,
      issuerMandate: true,
      issuerMandateEnabled: true,
      externalData: false,
    });
    expect(flowActionRecords(flow, overridden, false)).toEqual([
      {
        ruleId: 'rule-skip',
        action: 'skip-3ds',
        outcome: { result: true, applied: false, overridden_by: 'issuer_mandated_3ds' },
      },
    ]);
    const applied = planThreeDSecure({
      connectionEnabled: true,
      flow,
      issuerMandate: false,
      issuerMandateEnabled: true,
      externalData: false,
    });
    expect(flowActionRecords(flow, applied, false)).toEqual([
      { ruleId: 'rule-skip', action: 'skip-3ds', outcome: { result: true, applied: true } },
    ]);
    const off = planThreeDSecure({
      connectionEnabled: false,
      flow,
      issuerMandate: true,
      issuerMandateEnabled: true,
      externalData: false,
    });
    expect(flowActionRecords(flow, off, false)).toEqual([
      { ruleId: 'rule-skip', action: 'skip-3ds', outcome: { result: true, applied: false } },
    ]);
  });

  it('records a route rule bypassed by payment_service_id', () => {
    const flow: FlowDecision = { ...noFlowDecision, route: { ruleId: 'rule-route', paymentServiceIds: ['a', 'b'] } };
    expect(flowActionRecords(flow, null, true)).toEqual([
      {
        ruleId: 'rule-route',
        action: 'route-transaction',
        outcome: { result: ['a', 'b'], bypassed_by: 'payment_service_id' },
      },
    ]);
  });
});

describe('threeDsConfigurationFor', () => {
  const configuration = (
    id: string,
    scheme: string | null,
    currency: string | null,
    createdAt = '2026-01-01T00:00:00.000Z',
  ): ThreeDsConfiguration => ({
    type: 'merchant-account.three-ds-configuration',
    id,
    merchant_account_id: 'm',
    merchant_acquirer_bin: '400000',
    merchant_acquirer_id: 'acq',
    merchant_name: 'Shop',
    merchant_country_code: 'GB',
    merchant_category_code: '5999',
    merchant_url: 'https://shop.example',
    scheme,
    currency,
    metadata: {},
    created_at: createdAt,
    updated_at: createdAt,
  });

  it('prefers the exact scheme, then the exact currency, then the oldest', () => {
    const all = [
      configuration('any', null, null),
      configuration('visa-any', 'visa', null),
      configuration('any-eur', null, 'EUR'),
      configuration('visa-eur', 'visa', 'EUR'),
      configuration('visa-eur-new', 'visa', 'EUR', '2026-02-01T00:00:00.000Z'),
    ];
    expect(threeDsConfigurationFor(all, 'visa', 'EUR')?.id).toBe('visa-eur');
    expect(threeDsConfigurationFor(all, 'visa', 'USD')?.id).toBe('visa-any');
    expect(threeDsConfigurationFor(all, 'mastercard', 'EUR')?.id).toBe('any-eur');
    expect(threeDsConfigurationFor(all, 'mastercard', 'USD')?.id).toBe('any');
    expect(threeDsConfigurationFor([configuration('mc', 'mastercard', 'EUR')], 'visa', 'EUR')).toBeNull();
    expect(threeDsConfigurationFor([], 'visa', 'EUR')).toBeNull();
  });
});

describe('isFailoverCandidate', () => {
  it.each([
    ['failed', 'service_unavailable', true],
    ['failed', 'service_error', true],
    ['failed', 'invalid_service_configuration', true],
    ['declined', 'service_decline', true],
    ['declined', 'insufficient_funds', false],
    ['declined', 'suspected_fraud', false],
    ['failed', 'missing_cvv', false],
  ] as const)('%s %s → %s', (outcome, errorCode, expected) => {
    expect(isFailoverCandidate({ outcome, error: { errorCode } })).toBe(expected);
  });

  it('never moves on after a success, a pending or a buyer approval', () => {
    expect(isFailoverCandidate({ outcome: 'succeeded', authorizedAmount: 1 })).toBe(false);
    expect(isFailoverCandidate({ outcome: 'pending' })).toBe(false);
    expect(isFailoverCandidate({ outcome: 'buyer_approval_required' })).toBe(false);
  });
});
