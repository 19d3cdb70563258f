/**
 * Redoc's standalone bundle (one browser script, no network of its own), which renders the API reference at `/docs`
 * from `/openapi.json`. Read from node_modules (redoc is a dev dependency: a clone after `npm install` serves it with
 * no build step), else from `services/gateway/dist/redoc.standalone.js`, where `npm run build:api-reference` copies
 * it for an image installed without dev dependencies (the Dockerfile does). Read once per process.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const REDOC_BUNDLE = 'redoc/bundles/redoc.standalone.js';
export const builtRedocBundle = path.resolve(__dirname, '../../dist/redoc.standalone.js');

export interface ApiReferenceScript {
  readonly body: Buffer;
  /** A strong validator: `If-None-Match` with it answers 304. */
  readonly etag: string;
}

/** Where the bundle is: node_modules first, then the built copy; null when neither is there. */
export function locateRedocBundle(): string | null {
  try {
    return require.resolve(REDOC_BUNDLE);
  } catch {
    return fs.existsSync(builtRedocBundle) ? builtRedocBundle : null;
  }
}

let loaded: ApiReferenceScript | null = null;

export function redocScript(): ApiReferenceScript {
  if (loaded) return loaded;
  const file = locateRedocBundle();
  if (!file)
    throw new Error(
      `The API reference renderer is missing: install the dev dependencies or run \`npm run build:api-reference\` (${builtRedocBundle})`,
    );
  const body = fs.readFileSync(file);
  loaded = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"` };
  return loaded;
}
