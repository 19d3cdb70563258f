/** `npm run build:client`: writes `packages/client/dist/` (gitignored): ESM, CommonJS and declarations. */
import path from 'node:path';
import { buildClient } from './bundle';

buildClient().then(
  (built) => {
    for (const file of Object.values(built)) process.stdout.write(`${path.relative(process.cwd(), file)}\n`);
  },
  (error: unknown) => {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? '';
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${output}`);
    process.exitCode = 1;
  },
);
