/**
 * The dashboard's browser app as the gateway serves it, as the secure fields are: bundled in memory from
 * `packages/dashboard/src` with esbuild on first use (a clone after `npm install` needs no build step), else read from
 * `packages/dashboard/dist/` (`npm run build:dashboard`, for an image without dev dependencies). Built once per
 * process; a failed build is tried again on the next request.
 */
import { createHash } from 'node:crypto';
import { bundleDashboard, readBuiltDashboard, type DashboardAssetName } from '@switchyard/dashboard/build/bundle';
import { loadEsbuild } from '@switchyard/secure-fields/build/bundle';

export interface DashboardAsset {
  readonly body: string;
  /** A strong validator of the body: `If-None-Match` with it answers 304. */
  readonly etag: string;
}

export class DashboardAssets {
  private loading: Promise<Readonly<Record<DashboardAssetName, DashboardAsset>>> | null = null;

  constructor(private readonly options: { readonly loadEsbuild?: typeof loadEsbuild } = {}) {}

  async get(name: DashboardAssetName): Promise<DashboardAsset> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = null;
      throw error;
    });
    return (await this.loading)[name];
  }

  private async load(): Promise<Readonly<Record<DashboardAssetName, DashboardAsset>>> {
    const esbuild = await (this.options.loadEsbuild ?? loadEsbuild)();
    let texts;
    if (esbuild) {
      try {
        texts = await bundleDashboard(esbuild);
      } finally {
        await esbuild.stop();
      }
    } else {
      texts = readBuiltDashboard();
    }
    if (!texts)
      throw new Error(
        'The dashboard is not built: esbuild is not installed and packages/dashboard/dist/ is empty (run `npm run build:dashboard`)',
      );
    const asset = (body: string): DashboardAsset => ({
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    });
    return { 'app.js': asset(texts['app.js']), 'app.css': asset(texts['app.css']) };
  }
}

/** One per process: every gateway in it serves the same files. */
export const dashboardAssets = new DashboardAssets();
