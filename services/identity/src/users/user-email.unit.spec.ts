import { userEmail, userEmailStream, type UserEmailCommand, type UserEmailEvent } from './user-email';

const now = '2026-01-01T00:00:00.000Z';
const claim = (email: string, userId: string): UserEmailCommand => ({
  type: 'ClaimUserEmail',
  data: { email, userId },
  metadata: { now },
});
const given = (events: UserEmailEvent[]) => ({
  when: (command: UserEmailCommand) =>
    userEmail.decide(command, events.reduce(userEmail.evolve, userEmail.initialState())),
});

it('keys the stream by the email, case-insensitively', () =>
  expect(userEmailStream(' Ada@Example.COM ')).toBe(userEmailStream('ada@example.com')));

describe('when the email is free', () => {
  it('is claimed for the user', () =>
    expect(given([]).when(claim('ada@example.com', 'u1'))).toEqual([
      { type: 'UserEmailClaimed', data: { email: 'ada@example.com', userId: 'u1', at: now } },
    ]));
});

describe('when the email is claimed', () => {
  const claimed = given([]).when(claim('ada@example.com', 'u1')) as UserEmailEvent[];
  it('is refused to another user', () =>
    expect(() => given(claimed).when(claim('ADA@example.com', 'u2'))).toThrow(
      expect.objectContaining({ code: 'user_email_taken' }),
    ));
  it('changes nothing when the same user claims it again', () =>
    expect(given(claimed).when(claim('ada@example.com', 'u1'))).toEqual([]));
});
