/**
 * The committed `packages/client/src/generated/` is what `npm run generate:client` makes from the document the
 * embedded runtime serves now: a route, a schema or a scope changed without regenerating fails here (and in CI).
 */
import fs from 'node:fs';
import path from 'node:path';
import { generatedDir, generateClientSources, servedOpenApiDocument } from '../build/generated-sources';

describe('the generated client sources', () => {
  it('match GET /openapi.json of the embedded runtime (else: npm run generate:client)', async () => {
    const sources = await generateClientSources(await servedOpenApiDocument());
    for (const [name, text] of Object.entries(sources)) {
      const committed = fs.readFileSync(path.join(generatedDir, name), 'utf8');
      expect(
        committed === text,
        `packages/client/src/generated/${name} differs from the document: run npm run generate:client`,
      ).toBe(true);
    }
  }, 120_000);

  it('list every operation of the document with its scopes and whether it honours Idempotency-Key', async () => {
    const { operationFacts } = await import('../src/generated/operations');
    expect(operationFacts['POST /transactions']).toEqual({
      scopes: ['transactions.write', 'embed'],
      idempotencyKey: true,
    });
    expect(operationFacts['GET /transactions/{transaction_id}']).toEqual({
      scopes: ['transactions.read'],
      idempotencyKey: false,
    });
    expect(operationFacts['GET /healthz']).toEqual({ scopes: [], idempotencyKey: false });
  });
});
