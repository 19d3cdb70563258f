/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. `BENCH_CPU_PROF=<dir> npm run bench`): self time by
 * function and by package/area, over the samples of the last `--last-ms` milliseconds (the measured window; the
 * default skips nothing), without those of the last `--skip-last-ms` (a later window of the same run).
 *   node -r ./scripts/register.cjs bench/lib/cpuprofile-summary.ts <file.cpuprofile> [--last-ms 8000] [--skip-last-ms 0] [--top 30] [--callers NAME]
 * `--callers NAME`: where the self time of functions named NAME comes from (the first caller outside its package).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Groups a script URL into an area: a package under node_modules, a workspace folder, node internals. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 14).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const match = /\/(libs|services|tools|bench)\/([^/]+)\//.exec(url);
  return match ? `${match[1]}/${match[2]}` : url;
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [--last-ms N] [--top N]');
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? undefined : Number(process.argv[i + 1]);
  };
  const lastMs = arg('--last-ms');
  const skipLastMs = arg('--skip-last-ms') ?? 0;
  const top = arg('--top') ?? 30;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const times: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  const from = lastMs === undefined ? -Infinity : profile.endTime - lastMs * 1000;
  const until = profile.endTime - skipLastMs * 1000;
  const callersOf = process.argv.includes('--callers')
    ? process.argv[process.argv.indexOf('--callers') + 1]
    : undefined;
  const byCaller = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  const inclusiveByArea = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    if ((times[i] ?? 0) < from || (times[i] ?? 0) > until) continue;
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000; // ms until the next sample
    const node = byId.get(profile.samples[i]!);
    if (!node) continue;
    total += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    const fnKey = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|libs|services)\//, '$1/')}:${lineNumber + 1}`;
    selfByFunction.set(fnKey, (selfByFunction.get(fnKey) ?? 0) + dt);
    const area = areaOf(url, functionName);
    selfByArea.set(area, (selfByArea.get(area) ?? 0) + dt);
    if (callersOf !== undefined && functionName === callersOf) {
      const ownArea = areaOf(url, functionName);
      const chain: string[] = [];
      for (let id = parent.get(node.id); id !== undefined && chain.length < 3; id = parent.get(id)) {
        const frame = byId.get(id)!.callFrame;
        if (chain.length === 0 && areaOf(frame.url, frame.functionName) === ownArea) continue;
        chain.push(
          `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|libs|services)\//, '$1/')}:${frame.lineNumber + 1}`,
        );
      }
      const key = chain.join(' <- ');
      byCaller.set(key, (byCaller.get(key) ?? 0) + dt);
    }
    // Inclusive by area: each area on the stack once.
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      const a = areaOf(frame.url, frame.functionName);
      if (!seen.has(a)) {
        seen.add(a);
        inclusiveByArea.set(a, (inclusiveByArea.get(a) ?? 0) + dt);
      }
    }
  }
  const print = (title: string, map: Map<string, number>) => {
    process.stdout.write(`\n${title} (of ${total.toFixed(0)} ms sampled)\n`);
    for (const [key, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(
        `${((100 * ms) / total).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${key}\n`,
      );
    }
  };
  print('self time by area', selfByArea);
  print('inclusive time by area', inclusiveByArea);
  print('self time by function', selfByFunction);
  if (callersOf !== undefined) print(`self time of ${callersOf} by caller`, byCaller);
}

if (require.main === module) main();
