/** `npm run build:dashboard`: writes the dashboard's bundle to `packages/dashboard/dist/` and prints its sizes. */
import path from 'node:path';
import { buildDashboard } from './bundle';

(async () => {
  const esbuild = await import('esbuild').catch(() => null);
  if (!esbuild) throw new Error('esbuild is not installed: run `npm install` (it is a dev dependency)');
  try {
    for (const { file, bytes, gzipBytes } of await buildDashboard(esbuild)) {
      process.stdout.write(`${path.relative(process.cwd(), file)}  ${bytes} bytes (${gzipBytes} gzipped)\n`);
    }
  } finally {
    await esbuild.stop();
  }
})().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
