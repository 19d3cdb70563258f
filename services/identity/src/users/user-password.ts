/**
 * Dashboard passwords: what is acceptable, and the argon2id hash stored in `UserPasswordSet` (never the password).
 *
 * `@node-rs/argon2` (the reference argon2 implementation's Rust port, prebuilt per platform and shipped in the npm
 * package: nothing is downloaded or compiled at install or run time) hashes on libuv's thread pool, off the event
 * loop. Parameters are OWASP's first argon2id recommendation (Password Storage Cheat Sheet): 19 MiB of memory, 2
 * passes, 1 lane — about 30 ms per hash on one of this project's cores. They travel inside each PHC string
 * (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), so raising them later still verifies every stored hash.
 * `verify` compares the computed hash with the stored one in constant time.
 */
import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { DomainError } from '@switchyard/decider';

/** `Algorithm.Argon2id` of `@node-rs/argon2`: its enum is a `const enum`, which isolated modules cannot read. */
const ARGON2ID = 2;

export const PASSWORD_HASH_OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * NIST SP 800-63B: length is what makes a password strong, composition rules do not; at least 12 characters here
 * (an operator's dashboard reaches payments), and at most 256 so that a hash request stays small.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

export function assertAcceptablePassword(password: string): void {
  const length = [...password].length;
  const problem =
    length < PASSWORD_MIN_LENGTH
      ? `must be at least ${PASSWORD_MIN_LENGTH} characters`
      : length > PASSWORD_MAX_LENGTH
        ? `must be at most ${PASSWORD_MAX_LENGTH} characters`
        : password.trim() !== password
          ? 'must not start or end with white space'
          : null;
  if (problem)
    throw new DomainError('invalid_password', `invalid password: it ${problem}`, [
      { field: 'password', message: problem },
    ]);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

/** False for a wrong password and for a hash that is not a PHC argon2 string (never throws on either). */
export async function passwordMatches(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let decoy: Promise<string> | undefined;

/**
 * A hash of nothing anyone knows, with the same parameters: a sign-in for an email with no user (or no password)
 * verifies against it, so it takes as long as a wrong password and the answer's timing does not tell which emails exist.
 */
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(32).toString('base64url'));
  return decoy;
}
