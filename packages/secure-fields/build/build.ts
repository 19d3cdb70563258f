/** `npm run build:secure-fields`: writes both packages' bundles to their `dist/` folders and prints their sizes. */
import path from 'node:path';
import { buildAll } from './bundle';

buildAll().then(
  (files) => {
    for (const { file, bytes, gzipBytes } of files) {
      process.stdout.write(`${path.relative(process.cwd(), file)}  ${bytes} bytes (${gzipBytes} gzipped)\n`);
    }
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
