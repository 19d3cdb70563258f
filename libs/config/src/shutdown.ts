import type { Logger } from 'pino';

/**
 * Stops a process cleanly on SIGTERM, SIGINT or SIGHUP — or, when an npm script started it (`npm start`), once that
 * npm is gone: logs, runs `stop`, exits (1 if stopping failed).
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals | 'npm-exited') => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  process.once('SIGHUP', shutdown);
  stopWhenNpmExits(() => shutdown('npm-exited'));
}

/**
 * npm passes SIGINT and SIGTERM on to the script it runs, but not SIGHUP (a closed terminal), and nothing when it is
 * killed outright: the server would live on, orphaned, holding its port. A process started by an npm script
 * (`npm_lifecycle_event` is set) therefore watches its parent, and stops when the parent is no longer npm.
 */
export function stopWhenNpmExits(stop: () => void, intervalMs = 250): void {
  if (!process.env.npm_lifecycle_event) return;
  const npm = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === npm) return;
    clearInterval(watch);
    stop();
  }, intervalMs);
  watch.unref();
}

/** Runs a process's `main`, printing a start-up failure and exiting non-zero. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
