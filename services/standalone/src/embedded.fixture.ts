/**
 * The embedded runtime for HTTP specs: a fresh data directory, silent logs, removed afterwards — or, in a run that
 * keeps its artifacts (SWITCHYARD_TEST_ARTIFACTS), both kept for the data-protection scan.
 */
import { loadSettings } from '@switchyard/config';
import { artifactFile, createTestDataDir, removeTestDataDir } from '@switchyard/testing';
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
export async function startEmbeddedFixture(
  name: string,
  env: Record<string, string> = {},
  options: { listen?: boolean } = {},
): Promise<EmbeddedFixture> {
  const dataDir = createTestDataDir(name);
  // A run that keeps its artifacts keeps the service's log lines too, for the data-protection scan.
  const logFile = artifactFile('logs', `embedded-${name}`);
  const logger = logFile
    ? pino({ level: 'info' }, pino.destination({ dest: logFile, sync: true }))
    : pino({ level: 'silent' });
  const service = await startEmbedded(
    loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: logFile ? 'info' : 'silent', ...env }),
    logger,
  );
  if (options.listen) await service.gateway.app.listen(0, '127.0.0.1');
  return {
    service,
    dataDir,
    stop: async () => {
      await service.stop();
      removeTestDataDir(dataDir);
    },
  };
}
