/**
 * Heap snapshots of running child processes, and the card data in them (issue 19: the processes outside the card
 * data environment never hold a card number or a security code).
 *
 * A process started with `heapSnapshots().env` (NODE_OPTIONS `--require heap-snapshot.preload.cjs`) writes a
 * snapshot when sent SIGUSR2 (`take`). What a snapshot shows of the strings a process holds: a flat string's whole
 * text (the preload lifts V8's 1,024-character truncation), a concatenated string only as the pair of strings it
 * joins (`first`, `second`: rebuilt here, so a number split over the join is found), a sliced string only as its
 * parent (whose whole text is scanned), a number with its value. Not in a snapshot at all: the bytes of Buffers and
 * other ArrayBuffers (off the V8 heap, such as a socket's read buffers) and garbage (V8 collects before it writes);
 * the isolation spec scans what those bytes turn into (strings) and where they come from (Kafka, logs, files).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { maskSecurityCode, scanText, securityCodeNames, type CardDataFinding } from './card-data';
import { waitFor, type RunningProcess } from './processes';

const preload = path.join(__dirname, 'heap-snapshot.preload.cjs');

export interface HeapSnapshots {
  readonly dir: string;
  /** The environment of a process whose heap a test will take (add it to the process's own). */
  readonly env: Readonly<Record<string, string>>;
  /** SIGUSR2 to the process, then the path of its complete snapshot. */
  take(process: RunningProcess, timeoutMs?: number): Promise<string>;
  /** The process keeps `text` in its heap from its next snapshot on (see the preload): a scan must find it there. */
  plant(process: RunningProcess, text: string): void;
  /** Removes the folder and every snapshot in it. */
  remove(): void;
}

/** A fresh folder for the snapshots of the processes started with its `env` (under the OS temp folder, never kept). */
export function heapSnapshots(): HeapSnapshots {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-heap-'));
  const pidOf = (process: RunningProcess) => {
    const pid = process.child.pid;
    if (pid === undefined || process.child.exitCode !== null) throw new Error('the process is not running');
    return pid;
  };
  const snapshotsOf = (pid: number) =>
    fs.readdirSync(dir).filter((name) => name.startsWith(`${pid}-`) && name.endsWith('.heapsnapshot'));
  return {
    dir,
    env: {
      SWITCHYARD_HEAP_SNAPSHOT_DIR: dir,
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require "${preload}"`].filter(Boolean).join(' '),
    },
    async take(running, timeoutMs = 60_000) {
      const pid = pidOf(running);
      const before = new Set(snapshotsOf(pid));
      running.child.kill('SIGUSR2');
      const exited = () => running.child.exitCode !== null || running.child.signalCode !== null;
      const name = await waitFor(
        `a heap snapshot of process ${pid}`,
        async () => (exited() ? '' : snapshotsOf(pid).find((file) => !before.has(file))),
        timeoutMs,
        () => running.output().slice(-2_000),
      );
      if (name === '')
        throw new Error(`process ${pid} exited before it wrote a heap snapshot:\n${running.output().slice(-2_000)}`);
      return path.join(dir, name);
    },
    plant(running, text) {
      fs.writeFileSync(path.join(dir, `${pidOf(running)}.hold`), text);
    },
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface SnapshotFile {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

export interface HeapStrings {
  /** Every string of the snapshot's string table: flat strings' texts, numbers' values, names of every kind. */
  readonly strings: readonly string[];
  /** The text of each concatenated string no other one is part of, rebuilt from its parts. */
  readonly concatenated: readonly string[];
  /** Each property named as a security code (`security_code`, `cvv`, …) whose value is 3 or 4 digits. */
  readonly securityCodes: readonly { readonly name: string; readonly value: string }[];
}

/** The texts of a heap snapshot file (`.heapsnapshot`, as V8 writes it). */
export function readHeapStrings(file: string): HeapStrings {
  const { snapshot, nodes, edges, strings } = JSON.parse(fs.readFileSync(file, 'utf8')) as SnapshotFile;
  const { node_fields: nodeFields, edge_fields: edgeFields } = snapshot.meta;
  const nodeTypes = snapshot.meta.node_types[0];
  const edgeTypes = snapshot.meta.edge_types[0];
  const [typeAt, nameAt, edgeCountAt] = ['type', 'name', 'edge_count'].map((field) => nodeFields.indexOf(field));
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f));
  const nodeSize = nodeFields.length;
  const edgeSize = edgeFields.length;
  const nodeCount = nodes.length / nodeSize;
  const field = (values: readonly number[], at: number | undefined) => values[at as number] as number;

  const typeOf = (node: number) => nodeTypes[field(nodes, node * nodeSize + (typeAt as number))];
  const nameOf = (node: number) => strings[field(nodes, node * nodeSize + (nameAt as number))] as string;
  /** Index in `edges` of each node's first edge (a node's edges follow the previous node's). */
  const firstEdge = new Uint32Array(nodeCount + 1);
  for (let node = 0; node < nodeCount; node++)
    firstEdge[node + 1] =
      (firstEdge[node] as number) + field(nodes, node * nodeSize + (edgeCountAt as number)) * edgeSize;
  const edgesOf = function* (node: number) {
    for (let edge = firstEdge[node] as number; edge < (firstEdge[node + 1] as number); edge += edgeSize) {
      const type = edgeTypes[field(edges, edge + (edgeTypeAt as number))];
      const name = field(edges, edge + (edgeNameAt as number));
      // Element and hidden edges are named by an index, the others by a string of the table.
      yield {
        type,
        name: type === 'element' || type === 'hidden' ? String(name) : (strings[name] as string),
        to: field(edges, edge + (toAt as number)) / nodeSize,
      };
    }
  };

  const securityCodes: { name: string; value: string }[] = [];
  const consNodes: number[] = [];
  const consParts = new Set<number>();
  for (let node = 0; node < nodeCount; node++) {
    const type = typeOf(node);
    if (type === 'concatenated string') {
      consNodes.push(node);
      for (const edge of edgesOf(node)) if (edge.name === 'first' || edge.name === 'second') consParts.add(edge.to);
    } else if (type === 'object') {
      for (const edge of edgesOf(node)) {
        if (edge.type !== 'property' || !securityCodeNames.has(edge.name)) continue;
        const value = nameOf(edge.to);
        if (/^\d{3,4}$/.test(value)) securityCodes.push({ name: edge.name, value });
      }
    }
  }

  /**
   * A concatenated string's text, depth first (a long `+=` chain is deep: no recursion). Parts may be shared
   * (`s + s`): past 64 MB of text the rest of that string is left out.
   */
  const rebuild = (root: number) => {
    const parts: string[] = [];
    let length = 0;
    const pending = [root];
    while (pending.length > 0 && length < 64 * 1024 * 1024) {
      const node = pending.pop() as number;
      const type = typeOf(node);
      if (type === 'concatenated string') {
        const children = [...edgesOf(node)];
        const part = (name: string) => children.find((edge) => edge.name === name)?.to;
        for (const next of [part('second'), part('first')]) if (next !== undefined) pending.push(next);
      } else if (type === 'sliced string') {
        // A slice's offset is not in the snapshot: its parent's whole text, apart (it is scanned on its own too).
        const parent = [...edgesOf(node)].find((edge) => edge.name === 'parent')?.to;
        const text = parent === undefined ? '' : nameOf(parent);
        parts.push('\n', text, '\n');
        length += text.length;
      } else {
        const text = nameOf(node);
        parts.push(text);
        length += text.length;
      }
    }
    return parts.join('');
  };
  const concatenated = consNodes.filter((node) => !consParts.has(node)).map(rebuild);
  return { strings, concatenated, securityCodes };
}

/** Card data in a heap snapshot: in its strings, its rebuilt concatenations and its security code properties. */
export function scanHeapSnapshot(
  file: string,
  where: string,
  pans: readonly string[],
  findings: CardDataFinding[],
): HeapStrings {
  const heap = readHeapStrings(file);
  scanText(heap.strings.join('\n'), `${where} (strings)`, pans, findings);
  scanText(heap.concatenated.join('\n'), `${where} (concatenated strings)`, pans, findings);
  for (const { name, value } of heap.securityCodes)
    findings.push({ where: `${where} (object property)`, what: maskSecurityCode(`${name}: ${value}`) });
  return heap;
}
