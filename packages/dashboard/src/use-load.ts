/** Loads something for a page, again whenever `deps` change; `reload` loads it again on demand. */
import { useCallback, useEffect, useState } from 'react';

export type Loaded<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'failed'; readonly message: string }
  | { readonly state: 'ready'; readonly value: T };

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && setLoaded({ state: 'ready', value }),
      (error: unknown) =>
        current && setLoaded({ state: 'failed', message: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return [loaded, reload];
}
