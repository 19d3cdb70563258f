/**
 * A sleep that can be cut short: a subscription sleeps between polls and between handler retries, and an
 * append notification or `stop()` must end the sleep at once.
 */
export class WakeUpTimer {
  private wakeCurrent: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        if (this.wakeCurrent === wake) this.wakeCurrent = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeCurrent = wake;
    });
  }

  /** Ends the current sleep, if any. */
  wake(): void {
    this.wakeCurrent?.();
  }
}
