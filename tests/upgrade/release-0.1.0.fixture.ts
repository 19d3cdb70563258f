/**
 * Release 0.1.0's data directory and what that release answered on it (`tests/fixtures/release-0.1.0/`, made by its
 * `make-fixture.ts`), for the upgrade specs of both runtimes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@switchyard/testing';

export const fixture = path.join(repoRoot, 'tests/fixtures/release-0.1.0');

export interface Answer {
  readonly account: string | null;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

export const { answers, publicBaseUrl } = JSON.parse(fs.readFileSync(path.join(fixture, 'answers.json'), 'utf8')) as {
  answers: Answer[];
  publicBaseUrl: string;
};

/** The API key the fixture was made with. */
export const credentials = JSON.parse(fs.readFileSync(path.join(fixture, 'credentials.json'), 'utf8')) as {
  administrator: { kid: string; private_key: string };
};

/** A key's `last_used_at` moves with every use (the fixture's own reads included): compared without it. */
export const withoutLastUse = (body: unknown): unknown =>
  JSON.parse(JSON.stringify(body), (name, value: unknown) => (name === 'last_used_at' ? undefined : value));
