/**
 * `npm start` sizes the main thread's heap with `--max-old-space-size` (256 MB: the live heap under load is ~100 MB)
 * and `--max-semi-space-size` (16 MB semi-spaces, what the main thread's allocation rate needs; docs/performance.md,
 * Memory soak). V8 flags are the process's, and an explicit one takes precedence over a worker's `resourceLimits`:
 * every worker thread (the vault's, the token verifiers) got the main thread's 256 MB heap limit and 33.5 MB new
 * space, whatever it declared. Once the main isolate has its heap, the flags have done their work there (V8 reads
 * them when it configures an isolate's heap: the main thread keeps its limits), so they are cleared for the isolates
 * created after it: each worker then gets the limits it asks for (`worker-heap.int.spec.ts`).
 */
import v8 from 'node:v8';

export function workersUseTheirOwnHeapLimits(): void {
  v8.setFlagsFromString('--max-old-space-size=0');
  v8.setFlagsFromString('--max-semi-space-size=0');
}
