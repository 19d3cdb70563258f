/**
 * `npm run generate:client`: regenerates `packages/client/src/generated/` from the OpenAPI document that `npm start`
 * serves (`GET /openapi.json` of the embedded runtime, started here in a scratch data directory). The types come
 * from openapi-typescript; `operations.ts` lists, per operation, the scopes a token needs and whether it honours
 * `Idempotency-Key` — what the client reads at run time. `generated-sources.unit.spec.ts` fails when the committed
 * files drift from the document.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generatedDir, generateClientSources, servedOpenApiDocument } from './generated-sources';

servedOpenApiDocument()
  .then(async (document) => {
    const sources = await generateClientSources(document);
    fs.mkdirSync(generatedDir, { recursive: true });
    for (const [name, text] of Object.entries(sources)) {
      fs.writeFileSync(path.join(generatedDir, name), text);
      process.stdout.write(
        `${path.relative(process.cwd(), path.join(generatedDir, name))}  ${Buffer.byteLength(text)} bytes\n`,
      );
    }
  })
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
