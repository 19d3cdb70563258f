/**
 * An email's claim on a user: stream `user-email-<lower-cased email>`. Emails are unique case-insensitively; a
 * read-model check alone would let two racing writers (two CLI processes, two sign-ins) both pass, whereas the
 * append to this stream expects the revision it read, so exactly one of them holds the email.
 *
 * The email is claimed before the user is created (and never released: a user's email does not change). A crash
 * between the two appends leaves a claim whose user stream is empty; the next create or sign-in for that email
 * finishes the job under the claimed id (see `Users.create`).
 */
import { DomainError, type Decider } from '@switchyard/decider';

export type UserEmailEvent = {
  readonly type: 'UserEmailClaimed';
  readonly data: { readonly email: string; readonly userId: string; readonly at: string };
};

export type UserEmailCommand = {
  readonly type: 'ClaimUserEmail';
  readonly data: { readonly email: string; readonly userId: string };
  readonly metadata: { readonly now: string };
};

export type UserEmailState = { readonly status: 'free' } | { readonly status: 'claimed'; readonly userId: string };

export const emailKey = (email: string): string => email.trim().toLowerCase();
export const userEmailStream = (email: string): string => `user-email-${emailKey(email)}`;

export const userEmail: Decider<UserEmailCommand, UserEmailEvent, UserEmailState> = {
  initialState: () => ({ status: 'free' }),
  decide(command, state) {
    switch (command.type) {
      case 'ClaimUserEmail':
        if (state.status === 'free')
          return [{ type: 'UserEmailClaimed', data: { ...command.data, at: command.metadata.now } }];
        if (state.userId === command.data.userId) return [];
        throw new DomainError('user_email_taken', `a user with email ${command.data.email} already exists`, [
          { field: 'email', message: 'is already used by another user' },
        ]);
      default: {
        const unreachable: never = command.type;
        throw new Error(`unknown command ${String(unreachable)}`);
      }
    }
  },
  evolve(_state, event) {
    switch (event.type) {
      case 'UserEmailClaimed':
        return { status: 'claimed', userId: event.data.userId };
    }
  },
};
