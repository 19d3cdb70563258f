/**
 * `npm run build:api-reference`: copies Redoc's standalone bundle from node_modules to `services/gateway/dist/`
 * (gitignored), so that an image installed without dev dependencies still serves `/docs` (see the Dockerfile).
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtRedocBundle, REDOC_BUNDLE } from '../src/api-docs/api-reference-assets';

fs.mkdirSync(path.dirname(builtRedocBundle), { recursive: true });
fs.copyFileSync(require.resolve(REDOC_BUNDLE), builtRedocBundle);
process.stdout.write(
  `${path.relative(process.cwd(), builtRedocBundle)}  ${fs.statSync(builtRedocBundle).size} bytes\n`,
);
