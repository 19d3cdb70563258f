import type { Logger } from 'pino';

/** Stops a process cleanly on SIGTERM or SIGINT: logs, runs `stop`, exits (1 if stopping failed). */
export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  const shutdown = (signal: NodeJS.Signals) => {
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
}

/** Runs a process's `main`, printing a start-up failure and exiting non-zero. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
