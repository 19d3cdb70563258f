/**
 * Builds the secure fields with esbuild, each to ONE ES module: the merchant's module (`secure-fields.js`), the
 * frame's script (`frame.js`) and the React wrapper (`secure-fields-react.js`, React left to the merchant's bundler).
 * The gateway bundles the first two in memory from the sources when esbuild is installed (a clone after `npm install`,
 * tests), so nothing built is committed and no build step comes before `npm start`; an image installed without dev
 * dependencies serves what `npm run build:secure-fields` wrote to `packages/secure-fields/dist/` instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

export type ServedAsset = 'secure-fields.js' | 'frame.js';
export type ServedAssets = Readonly<Record<ServedAsset, string>>;

export const secureFieldsRoot = path.resolve(__dirname, '..');
export const secureFieldsReactRoot = path.resolve(__dirname, '../../secure-fields-react');
export const servedAssetsDir = path.join(secureFieldsRoot, 'dist');
export const reactDistDir = path.join(secureFieldsReactRoot, 'dist');

const ENTRIES: Readonly<Record<ServedAsset, string>> = {
  'secure-fields.js': path.join(secureFieldsRoot, 'src/index.ts'),
  'frame.js': path.join(secureFieldsRoot, 'src/frame.ts'),
};
const REACT_ENTRY = path.join(secureFieldsReactRoot, 'src/index.ts');
/** Browsers with ES modules, `??`/`?.`, BroadcastChannel and AbortSignal.timeout. */
const TARGET = ['es2020', 'chrome93', 'firefox100', 'safari16'];

type Esbuild = typeof import('esbuild');

/** esbuild, or null when it is not installed (production installs leave dev dependencies out). */
export async function loadEsbuild(): Promise<Esbuild | null> {
  try {
    return await import('esbuild');
  } catch {
    return null;
  }
}

async function bundle(
  esbuild: Esbuild,
  entry: string,
  options: { minify: boolean; external?: string[]; banner: string },
): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: TARGET,
    minify: options.minify,
    legalComments: 'none',
    charset: 'utf8',
    external: options.external ?? [],
    banner: { js: options.banner },
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output || result.outputFiles.length !== 1)
    throw new Error(`esbuild built ${result.outputFiles.length} files from ${entry}, expected one`);
  return output.text;
}

/** The two files the gateway serves, bundled now from the sources. */
export async function bundleServedAssets(esbuild: Esbuild): Promise<ServedAssets> {
  const banner = '/* @switchyard/secure-fields */';
  const [module, frame] = await Promise.all([
    bundle(esbuild, ENTRIES['secure-fields.js'], { minify: true, banner }),
    bundle(esbuild, ENTRIES['frame.js'], { minify: true, banner }),
  ]);
  return { 'secure-fields.js': module, 'frame.js': frame };
}

/** What `npm run build:secure-fields` wrote, or null when it has not run. */
export function readBuiltAssets(dir = servedAssetsDir): ServedAssets | null {
  const read = (name: ServedAsset) => {
    try {
      return fs.readFileSync(path.join(dir, name), 'utf8');
    } catch {
      return null;
    }
  };
  const module = read('secure-fields.js');
  const frame = read('frame.js');
  return module !== null && frame !== null ? { 'secure-fields.js': module, 'frame.js': frame } : null;
}

export interface BuiltFile {
  readonly file: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

/** Writes every bundle to its package's `dist/` (gitignored); answers their sizes. */
export async function buildAll(): Promise<BuiltFile[]> {
  const esbuild = await loadEsbuild();
  if (!esbuild) throw new Error('esbuild is not installed: run `npm install` (it is a dev dependency)');
  const served = await bundleServedAssets(esbuild);
  const react = await bundle(esbuild, REACT_ENTRY, {
    minify: false,
    external: ['react', 'react-dom', 'react/jsx-runtime'],
    banner: '/* @switchyard/secure-fields-react */',
  });
  const outputs: Array<[string, string]> = [
    ...Object.entries(served).map(([name, text]): [string, string] => [path.join(servedAssetsDir, name), text]),
    [path.join(reactDistDir, 'secure-fields-react.js'), react],
  ];
  return outputs.map(([file, text]) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return { file, bytes: Buffer.byteLength(text), gzipBytes: gzipSync(text).length };
  });
}
