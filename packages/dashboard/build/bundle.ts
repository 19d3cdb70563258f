/**
 * Builds the dashboard's browser app with esbuild: one ES module (`app.js`, React included) and its style sheet
 * (`app.css`). The gateway bundles them in memory from the sources when esbuild is installed (a clone after `npm
 * install`, tests), so nothing built is committed; an image installed without dev dependencies serves what
 * `npm run build:dashboard` wrote to `packages/dashboard/dist/` instead (the Dockerfile runs it before pruning).
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

export type DashboardAssetName = 'app.js' | 'app.css';
export type DashboardAssetTexts = Readonly<Record<DashboardAssetName, string>>;

export const dashboardRoot = path.resolve(__dirname, '..');
export const dashboardDistDir = path.join(dashboardRoot, 'dist');
const ENTRY = path.join(dashboardRoot, 'src/main.tsx');
const STYLES = path.join(dashboardRoot, 'src/styles.css');
/** Browsers with ES modules, `??`/`?.` and `structuredClone` (evergreen since 2022). */
const TARGET = ['es2020', 'chrome98', 'firefox100', 'safari15.4'];

type Esbuild = typeof import('esbuild');

export async function bundleDashboard(esbuild: Esbuild): Promise<DashboardAssetTexts> {
  const [script, styles] = await Promise.all([
    esbuild.build({
      entryPoints: [ENTRY],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: TARGET,
      minify: true,
      jsx: 'automatic',
      define: { 'process.env.NODE_ENV': '"production"' },
      legalComments: 'none',
      charset: 'utf8',
      logLevel: 'silent',
    }),
    esbuild.transform(fs.readFileSync(STYLES, 'utf8'), { loader: 'css', minify: true, target: TARGET }),
  ]);
  const [output] = script.outputFiles;
  if (!output || script.outputFiles.length !== 1)
    throw new Error(`esbuild built ${script.outputFiles.length} files from ${ENTRY}, expected one`);
  return { 'app.js': output.text, 'app.css': styles.code };
}

/** What `npm run build:dashboard` wrote, or null when it has not run. */
export function readBuiltDashboard(dir = dashboardDistDir): DashboardAssetTexts | null {
  const read = (name: DashboardAssetName) => {
    try {
      return fs.readFileSync(path.join(dir, name), 'utf8');
    } catch {
      return null;
    }
  };
  const script = read('app.js');
  const styles = read('app.css');
  return script !== null && styles !== null ? { 'app.js': script, 'app.css': styles } : null;
}

/** Writes both files to `dist/` (gitignored) and answers their sizes. */
export async function buildDashboard(
  esbuild: Esbuild,
): Promise<Array<{ file: string; bytes: number; gzipBytes: number }>> {
  const texts = await bundleDashboard(esbuild);
  fs.mkdirSync(dashboardDistDir, { recursive: true });
  return Object.entries(texts).map(([name, text]) => {
    const file = path.join(dashboardDistDir, name);
    fs.writeFileSync(file, text);
    return { file, bytes: Buffer.byteLength(text), gzipBytes: gzipSync(text).length };
  });
}
