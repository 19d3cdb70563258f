import {
  networkTokenDecider,
  type NetworkTokenCommand,
  type NetworkTokenEvent,
  type NetworkTokenOwner,
} from './network-token';

const now = '2026-01-01T00:00:00.000Z';
const owner: NetworkTokenOwner = { id: 'nt-1', merchantAccountId: 'shop', paymentMethodId: 'pm-1' };
const provisioned = {
  providerTokenId: 'sim_ntk_1',
  sealedToken: 'sealed',
  expirationDate: '11/30',
  paymentAccountReference: 'V001ABC',
};

const given = (events: NetworkTokenEvent[]) => ({
  when: (command: NetworkTokenCommand) =>
    networkTokenDecider.decide(command, events.reduce(networkTokenDecider.evolve, networkTokenDecider.initialState())),
});

const record = (
  answer: Extract<NetworkTokenCommand, { type: 'RecordProvisioning' }>['data']['answer'],
): NetworkTokenCommand => ({
  type: 'RecordProvisioning',
  data: { ...owner, scheme: 'visa', trigger: 'api', answer },
  metadata: { now },
});
const suspend = (data: NetworkTokenOwner = owner): NetworkTokenCommand => ({
  type: 'SuspendNetworkToken',
  data,
  metadata: { now },
});
const resume = (data: NetworkTokenOwner = owner): NetworkTokenCommand => ({
  type: 'ResumeNetworkToken',
  data,
  metadata: { now },
});
const remove = (data: NetworkTokenOwner = owner): NetworkTokenCommand => ({
  type: 'DeleteNetworkToken',
  data: { ...data, reason: 'api' },
  metadata: { now },
});

const notFound = expect.objectContaining({ code: 'network_token_not_found' });
const active: NetworkTokenEvent[] = [
  { type: 'NetworkTokenProvisioned', data: { ...owner, ...provisioned, scheme: 'visa', trigger: 'api', at: now } },
];
const suspended: NetworkTokenEvent[] = [...active, { type: 'NetworkTokenSuspended', data: { ...owner, at: now } }];
const deleted: NetworkTokenEvent[] = [
  ...active,
  { type: 'NetworkTokenDeleted', data: { ...owner, reason: 'api', at: now } },
];

describe('when no token exists', () => {
  it('records a provisioned token, sealed, with its provider id and expiry', () =>
    expect(given([]).when(record({ outcome: 'succeeded', ...provisioned }))).toEqual(active));

  it("records the token service's refusal", () =>
    expect(given([]).when(record({ outcome: 'failed', errorCode: 'card_not_eligible', message: 'no' }))).toEqual([
      {
        type: 'NetworkTokenProvisionFailed',
        data: { ...owner, scheme: 'visa', trigger: 'api', errorCode: 'card_not_eligible', message: 'no', at: now },
      },
    ]));

  it.each([
    ['suspend', suspend()],
    ['resume', resume()],
    ['delete', remove()],
  ])('cannot %s it: not found', (_, command) => expect(() => given([]).when(command)).toThrow(notFound));
});

describe('when the token is active', () => {
  it('cannot be provisioned again', () =>
    expect(() => given(active).when(record({ outcome: 'succeeded', ...provisioned }))).toThrow(
      expect.objectContaining({ code: 'network_token_exists' }),
    ));

  it('suspends', () =>
    expect(given(active).when(suspend())).toEqual([{ type: 'NetworkTokenSuspended', data: { ...owner, at: now } }]));
  it('resumes to nothing: already active', () => expect(given(active).when(resume())).toEqual([]));
  it('deletes, with the reason', () =>
    expect(
      given(active).when({
        type: 'DeleteNetworkToken',
        data: { ...owner, reason: 'payment_method_deleted' },
        metadata: { now },
      }),
    ).toEqual([{ type: 'NetworkTokenDeleted', data: { ...owner, reason: 'payment_method_deleted', at: now } }]));

  it.each([
    ['another merchant account', { ...owner, merchantAccountId: 'other' }],
    ['another payment method', { ...owner, paymentMethodId: 'pm-2' }],
  ])('does not exist under %s', (_, other) => {
    expect(() => given(active).when(suspend(other))).toThrow(notFound);
    expect(() => given(active).when(remove(other))).toThrow(notFound);
  });
});

describe('when the token is suspended', () => {
  it('resumes', () =>
    expect(given(suspended).when(resume())).toEqual([{ type: 'NetworkTokenResumed', data: { ...owner, at: now } }]));
  it('suspends to nothing: already suspended', () => expect(given(suspended).when(suspend())).toEqual([]));
  it('deletes', () => expect(given(suspended).when(remove())).toHaveLength(1));
});

describe('when the token is deleted (final) or its provisioning failed', () => {
  const failed: NetworkTokenEvent[] = [
    {
      type: 'NetworkTokenProvisionFailed',
      data: { ...owner, scheme: 'visa', trigger: 'automatic', errorCode: 'card_not_eligible', message: 'no', at: now },
    },
  ];
  it.each([
    ['suspend', suspend()],
    ['resume', resume()],
    ['delete', remove()],
  ])('cannot %s it: not found', (_, command) => {
    expect(() => given(deleted).when(command)).toThrow(notFound);
    expect(() => given(failed).when(command)).toThrow(notFound);
  });
  it('cannot be provisioned on the same stream', () =>
    expect(() => given(failed).when(record({ outcome: 'succeeded', ...provisioned }))).toThrow(
      expect.objectContaining({ code: 'network_token_exists' }),
    ));
});
