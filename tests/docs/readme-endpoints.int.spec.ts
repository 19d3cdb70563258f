/**
 * Issue 23, item 3: the README's endpoint table lists every path of the API with its scopes, as `GET /openapi.json`
 * of the embedded runtime has them (`npm run docs:endpoints` rewrites it).
 */
import fs from 'node:fs';
import { servedOpenApiDocument } from '../../packages/client/build/generated-sources';
import { endpointTable, README, readmeEndpointTable } from '../../scripts/docs/readme-endpoints';

describe("the README's endpoint table", () => {
  it('is the one GET /openapi.json makes (else: npm run docs:endpoints)', async () => {
    const document = await servedOpenApiDocument();
    const inReadme = readmeEndpointTable(fs.readFileSync(README, 'utf8'));
    expect(inReadme).toBe(endpointTable(document as Parameters<typeof endpointTable>[0]));
    for (const path of [
      '/gift-cards/balances',
      '/checkout/sessions/{session_id}/card-details',
      '/payment-service-definitions/{payment_service_definition_id}',
    ]) {
      expect(inReadme).toContain(`| \`${path}\` |`);
    }
  }, 120_000);
});
