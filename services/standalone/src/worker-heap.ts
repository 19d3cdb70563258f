/**
 * `npm start` sizes the main thread's young generation with `--max-semi-space-size` (package.json: 16 MB semi-spaces,
 * what the main thread's allocation rate needs; docs/performance.md, Memory soak). V8 flags are the process's, and an
 * explicit one takes precedence over a worker's `resourceLimits`: every worker thread (the vault's, the token
 * verifiers) would get the main thread's 33.5 MB new space, whatever young generation it declares. Once the main
 * isolate has its heap, the flag has done its work there (V8 reads it when it configures an isolate's heap), so it is
 * cleared for the isolates created after it: each worker then gets the limits it asks for.
 */
import v8 from 'node:v8';

export function workersUseTheirOwnHeapLimits(): void {
  v8.setFlagsFromString('--max-semi-space-size=0');
}
