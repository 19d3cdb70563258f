/**
 * The providers' own published documents (Adyen's OpenAPI documents, Stripe's example objects), read where the
 * workplace keeps them: `SWITCHYARD_PROVIDER_DOCUMENTS`, else `/work/shared/reference/providers`, else
 * `../shared/reference/providers` beside the repository. They are data, never copied into the repository; a spec
 * that needs them skips with a printed SKIP line when they are absent.
 */
import fs from 'node:fs';
import path from 'node:path';

const candidates = (): string[] => [
  ...(process.env.SWITCHYARD_PROVIDER_DOCUMENTS ? [process.env.SWITCHYARD_PROVIDER_DOCUMENTS] : []),
  '/work/shared/reference/providers',
  path.resolve(__dirname, '../../../../../shared/reference/providers'),
];

/** The folder holding `adyen/` and `stripe/`, or undefined when this machine has none. */
export function providerDocumentsDir(): string | undefined {
  return candidates().find((dir) => fs.existsSync(path.join(dir, 'adyen')) && fs.existsSync(path.join(dir, 'stripe')));
}

/** For a spec's `describe.skipIf`: true (and a printed SKIP line) when the documents are absent. */
export function skipWithoutProviderDocuments(suite: string): boolean {
  if (providerDocumentsDir()) return false;
  console.log(`SKIP ${suite}: the providers' documents are not on this machine (${candidates().join(', ')})`);
  return true;
}

export function readProviderDocument<T = unknown>(relativePath: string): T {
  const dir = providerDocumentsDir();
  if (!dir) throw new Error(`the providers' documents are not on this machine (${candidates().join(', ')})`);
  return JSON.parse(fs.readFileSync(path.join(dir, relativePath), 'utf8')) as T;
}
