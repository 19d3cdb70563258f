/** `npm start`: the whole service in one process, on embedded defaults. */
import 'reflect-metadata';
import { createLogger, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import { startEmbedded } from './embedded';
import { workersUseTheirOwnHeapLimits } from './worker-heap';

workersUseTheirOwnHeapLimits();

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('switchyard', settings);
  const service = await startEmbedded(settings, log);
  await service.gateway.app.listen(settings.PORT, settings.HOST);
  log.info(
    { node: process.version, url: `http://${settings.HOST}:${settings.PORT}`, dataDir: settings.dataDir },
    'Switchyard listening (embedded runtime)',
  );
  if (service.demoCheckout) {
    log.info(
      { url: `http://localhost:${settings.PORT}/demo/checkout` },
      'demo checkout (open it on localhost: the secure fields are served from the service address)',
    );
  }
  stopOnSignals(log, () => service.stop());
});
