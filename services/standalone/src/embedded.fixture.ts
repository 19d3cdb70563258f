/** The embedded runtime for HTTP specs: a fresh data directory, silent logs, removed afterwards. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import pino from 'pino';
import { startEmbedded, type EmbeddedService } from './embedded';

export interface EmbeddedFixture {
  readonly service: EmbeddedService;
  readonly dataDir: string;
  stop(): Promise<void>;
}

/**
 * `listen: true` binds the gateway to a free loopback port, for tests where something calls it back over real
 * HTTP (the simulator's notifications).
 */
export async function startEmbeddedFixture(name: string, env: Record<string, string> = {}, options: { listen?: boolean } = {}): Promise<EmbeddedFixture> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `switchyard-${name}-`));
  const service = await startEmbedded(loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env }), pino({ level: 'silent' }));
  if (options.listen) await service.gateway.app.listen(0, '127.0.0.1');
  return {
    service,
    dataDir,
    stop: async () => {
      await service.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
