/**
 * Shared closed-loop load generator for the benchmarks (`npm run bench`, `npm run bench:distributed`).
 *
 * `runLoad` starts `concurrency` workers; each awaits `request(i)` back to back. Requests started during the first
 * `warmupMs` are not recorded; the measured window is the next `durationMs`, after which no new request starts and
 * the window closes when the last one in flight has answered. Latency percentiles come from every recorded sample
 * (no histogram buckets). A request that throws counts as an error (its latency is not recorded).
 *
 * CPU per request: utime + stime of the measured process (all its threads) read from /proc/<pid>/stat at the start
 * and end of the measured window, divided by the successful requests. Null when no pid is given or /proc is absent.
 *
 * HTTP: `undici` is not installed in this repository (only undici-types), so `HttpClient` uses node:http with a
 * keep-alive Agent (maxSockets = concurrency). A non-2xx answer makes `request` throw, so it counts as an error.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly durationMs: number;
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly cpuMsPerRequest: number | null;
  readonly firstError?: string;
}

export interface LoadOptions {
  readonly concurrency: number;
  readonly durationMs: number;
  readonly warmupMs?: number;
  readonly request: (i: number) => Promise<void>;
  readonly cpuPid?: number;
}

/** Nearest-rank percentile of an ascending-sorted sample list (p in 0..100). NaN for an empty list. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0] as number;
  if (p >= 100) return sorted[sorted.length - 1] as number;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** Sorts a copy of the samples (ms) and returns p50/p95/p99. */
export function latencySummary(samples: ArrayLike<number>): { p50Ms: number; p95Ms: number; p99Ms: number } {
  const sorted = Float64Array.from(samples as ArrayLike<number>).sort();
  return { p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), p99Ms: percentile(sorted, 99) };
}

let clockTicks: number | undefined;
/** Clock ticks per second for /proc (USER_HZ); 100 on every Linux build Node supports. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) clockTicks = Number(process.env.CLK_TCK) || 100;
  return clockTicks;
}

/** Parses utime + stime (fields 14 and 15) of a /proc/<pid>/stat line into milliseconds. */
export function parseProcStatCpuMs(stat: string, ticks = 100): number {
  // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14 -> rest[11], stime field 15 -> rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return ((utime + stime) * 1000) / ticks;
}

/** CPU time (user + system, ms, all threads) consumed so far by a process; null if it cannot be read. */
export function processCpuMs(pid: number): number | null {
  try {
    return parseProcStatCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'), ticksPerSecond());
  } catch {
    if (pid === process.pid) {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    }
    return null;
  }
}

/** The machine's CPU time so far from the first line of /proc/stat (ms, summed over cores); null off Linux. */
export interface MachineCpu {
  /** user + nice + system: time in processes (what /proc/<pid>/stat attributes to them). */
  readonly busyMs: number;
  /** irq + softirq: interrupts, loopback TCP among them, attributed to no process. */
  readonly irqMs: number;
  readonly idleMs: number;
  readonly stealMs: number;
}

/** Parses the aggregate `cpu` line of /proc/stat (idle includes iowait). */
export function parseProcStat(stat: string, ticks = 100): MachineCpu | null {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const ms = (value: number) => (value * 1000) / ticks;
  return { busyMs: ms(user + nice + system), irqMs: ms(irq + softirq), idleMs: ms(idle + iowait), stealMs: ms(steal) };
}

export function machineCpu(): MachineCpu | null {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'), ticksPerSecond());
  } catch {
    return null;
  }
}

/** Resident set size (bytes) of a process from /proc/<pid>/status (VmRSS); null if it cannot be read. */
export function processRssBytes(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** What `/proc/<pid>/status` tells of a process's memory, in bytes (Linux; null where a line is missing). */
export interface ProcessMemory {
  readonly rss: number | null;
  /** Private memory: the heaps (V8's and malloc's), stacks. */
  readonly rssAnon: number | null;
  /** Mapped files: the node binary, native modules, SQLite files when mapped. */
  readonly rssFile: number | null;
  readonly rssShmem: number | null;
  readonly threads: number | null;
}

export function parseProcStatus(status: string): ProcessMemory {
  const kb = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : null;
  };
  const threads = /^Threads:\s+(\d+)/m.exec(status);
  return {
    rss: kb('VmRSS'),
    rssAnon: kb('RssAnon'),
    rssFile: kb('RssFile'),
    rssShmem: kb('RssShmem'),
    threads: threads ? Number(threads[1]) : null,
  };
}

export function processMemory(pid: number): ProcessMemory | null {
  try {
    return parseProcStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return null;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { concurrency, durationMs, request, cpuPid } = options;
  const warmupMs = options.warmupMs ?? 0;
  if (!(concurrency >= 1)) throw new Error('runLoad: concurrency must be >= 1');
  const start = performance.now();
  const measureStart = start + warmupMs;
  const measureEnd = measureStart + durationMs;
  const samples: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let counter = 0;
  let cpuStart: number | null = null;
  let cpuStartTaken = warmupMs <= 0;
  if (cpuStartTaken && cpuPid !== undefined) cpuStart = processCpuMs(cpuPid);
  // Take the CPU reading exactly when the window opens, not when the first worker happens to notice it.
  const cpuTimer =
    !cpuStartTaken && cpuPid !== undefined
      ? setTimeout(() => {
          if (cpuStartTaken) return;
          cpuStartTaken = true;
          cpuStart = processCpuMs(cpuPid);
        }, warmupMs)
      : undefined;

  async function worker(): Promise<void> {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= measureEnd) return;
      const i = counter;
      counter += 1;
      const measured = t0 >= measureStart;
      if (measured && !cpuStartTaken) {
        cpuStartTaken = true;
        if (cpuPid !== undefined) cpuStart = processCpuMs(cpuPid);
      }
      try {
        await request(i);
        if (measured) samples.push(performance.now() - t0);
      } catch (error) {
        if (measured) {
          errors += 1;
          if (firstError === undefined) firstError = describe(error);
        }
      }
    }
  }

  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  if (cpuTimer) clearTimeout(cpuTimer);
  const end = performance.now();
  const cpuEnd = cpuPid !== undefined ? processCpuMs(cpuPid) : null;
  const windowMs = Math.max(end - measureStart, 1e-9);
  const requests = samples.length;
  const cpuMsPerRequest = cpuStart !== null && cpuEnd !== null && requests > 0 ? (cpuEnd - cpuStart) / requests : null;
  return {
    requests,
    errors,
    durationMs: windowMs,
    throughput: (requests * 1000) / windowMs,
    ...latencySummary(samples),
    cpuMsPerRequest,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    method: string,
    path: string,
  ) {
    super(`${method} ${path} -> ${status}: ${body.slice(0, 300)}`);
  }
}

/** A keep-alive HTTP/1.1 client for one origin (loopback). `request` throws HttpError on a non-2xx answer. */
export class HttpClient {
  readonly agent: Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(baseUrl: string, options: { maxSockets?: number } = {}) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    this.agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64, keepAliveMsecs: 10_000 });
  }

  request(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<HttpAnswer> {
    const payload =
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body);
    const headers: Record<string, string | number> = { ...options.headers };
    if (payload !== undefined) {
      if (headers['content-type'] === undefined) headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: this.host, port: this.port, method, path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status >= 300) reject(new HttpError(status, body, method, path));
          else resolve({ status, body });
        });
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Same as `request`, parsing the JSON answer. */
  async json<T = unknown>(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<T> {
    const answer = await this.request(method, path, options);
    return (answer.body === '' ? undefined : JSON.parse(answer.body)) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}
