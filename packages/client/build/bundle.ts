/**
 * The client's build: one ES module (`esm/index.mjs`) and one CommonJS file (`cjs/index.cjs`) bundled by esbuild —
 * the workspace's webhook signature code inside, openapi-fetch left to the installer — and the type declarations
 * written by tsc (`types/`), relative imports given their `.js` so that Node16/NodeNext resolution finds them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const clientRoot = path.resolve(__dirname, '..');
export const defaultOutDir = path.join(clientRoot, 'dist');

export interface BuiltClient {
  readonly esm: string;
  readonly cjs: string;
  readonly types: string;
}

/**
 * Builds into a scratch folder beside `outDir`, then moves each file into place (a rename replaces a file at once),
 * so that a process reading `outDir` while another builds never sees half a file.
 */
export async function buildClient(outDir = defaultOutDir): Promise<BuiltClient> {
  const scratch = `${outDir}.building-${process.pid}-${Date.now()}`;
  try {
    await buildInto(scratch);
    for (const file of fs.readdirSync(scratch, { recursive: true, encoding: 'utf8' })) {
      const from = path.join(scratch, file);
      if (!fs.statSync(from).isFile()) continue;
      fs.mkdirSync(path.dirname(path.join(outDir, file)), { recursive: true });
      fs.renameSync(from, path.join(outDir, file));
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return {
    esm: path.join(outDir, 'esm/index.mjs'),
    cjs: path.join(outDir, 'cjs/index.cjs'),
    types: path.join(outDir, 'types/index.d.ts'),
  };
}

async function buildInto(outDir: string): Promise<BuiltClient> {
  const esbuild = await import('esbuild');
  const packageJson = JSON.parse(fs.readFileSync(path.join(clientRoot, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const common = {
    entryPoints: [path.join(clientRoot, 'src/index.ts')],
    bundle: true,
    platform: 'node' as const,
    target: 'node20',
    external: Object.keys(packageJson.dependencies ?? {}),
    legalComments: 'none' as const,
    logLevel: 'silent' as const,
    banner: { js: '/* @switchyard/client */' },
  };
  const built = {
    esm: path.join(outDir, 'esm/index.mjs'),
    cjs: path.join(outDir, 'cjs/index.cjs'),
    types: path.join(outDir, 'types/index.d.ts'),
  };
  await esbuild.build({ ...common, format: 'esm', outfile: built.esm });
  await esbuild.build({ ...common, format: 'cjs', outfile: built.cjs });

  const typesDir = path.join(outDir, 'types');
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(clientRoot, 'tsconfig.build.json'), '--outDir', typesDir], {
    stdio: 'pipe',
  });
  for (const file of fs.readdirSync(typesDir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts')) continue;
    const full = path.join(typesDir, file);
    fs.writeFileSync(
      full,
      fs.readFileSync(full, 'utf8').replace(/(from\s+'|import\(')(\.{1,2}\/[^']+?)(?<!\.js)'/g, "$1$2.js'"),
    );
  }
  return built;
}
