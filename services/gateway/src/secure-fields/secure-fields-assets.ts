/**
 * The secure fields' two scripts as the gateway serves them: bundled in memory from `packages/secure-fields/src` on
 * first use when esbuild is installed (`npm install`: a clone needs no build step), else read from
 * `packages/secure-fields/dist/` (`npm run build:secure-fields`, for an install without dev dependencies). Built once
 * per process; a failed build is tried again on the next request.
 */
import { createHash } from 'node:crypto';
import {
  bundleServedAssets,
  loadEsbuild,
  readBuiltAssets,
  servedAssetsDir,
  type ServedAsset,
} from '@switchyard/secure-fields/build/bundle';

export interface SecureFieldsAsset {
  readonly body: string;
  /** A strong validator of the body: `If-None-Match` with it answers 304. */
  readonly etag: string;
}

export type { ServedAsset };

export interface SecureFieldsAssetsOptions {
  /** esbuild, or null when not installed (default: whether `esbuild` can be imported). */
  readonly loadEsbuild?: typeof loadEsbuild;
  /** Where `npm run build:secure-fields` writes (default `packages/secure-fields/dist`). */
  readonly builtDir?: string;
}

export class SecureFieldsAssets {
  constructor(private readonly options: SecureFieldsAssetsOptions = {}) {}

  private loading: Promise<Readonly<Record<ServedAsset, SecureFieldsAsset>>> | null = null;

  async get(name: ServedAsset): Promise<SecureFieldsAsset> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = null;
      throw error;
    });
    return (await this.loading)[name];
  }

  private async load(): Promise<Readonly<Record<ServedAsset, SecureFieldsAsset>>> {
    const esbuild = await (this.options.loadEsbuild ?? loadEsbuild)();
    let texts;
    if (esbuild) {
      try {
        texts = await bundleServedAssets(esbuild);
      } finally {
        // esbuild keeps a helper process for later builds; this process builds once. The next call would start it again.
        await esbuild.stop();
      }
    } else {
      texts = readBuiltAssets(this.options.builtDir ?? servedAssetsDir);
    }
    if (!texts) {
      throw new Error(
        'The secure fields are not built: esbuild is not installed and packages/secure-fields/dist/ is empty (run `npm run build:secure-fields`)',
      );
    }
    const asset = (body: string): SecureFieldsAsset => ({
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    });
    return { 'secure-fields.js': asset(texts['secure-fields.js']), 'frame.js': asset(texts['frame.js']) };
  }
}

/** One per process: every gateway in it serves the same files. */
export const secureFieldsAssets = new SecureFieldsAssets();
