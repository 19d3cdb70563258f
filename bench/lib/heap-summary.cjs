// Heap snapshot summary (for `SOAK_HEAP_SNAPSHOT_DIR=<dir> npm run bench:soak`):
//   node bench/lib/heap-summary.cjs a.heapsnapshot [b.heapsnapshot]
// self size and count by constructor (objects, closures) or node type; given two snapshots, what grew from a to b.
const fs = require('node:fs');
function summarize(file) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const f = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const n = f.length;
  const nodes = snap.nodes;
  const strings = snap.strings;
  const iType = f.indexOf('type'),
    iName = f.indexOf('name'),
    iSize = f.indexOf('self_size');
  const by = new Map();
  for (let i = 0; i < nodes.length; i += n) {
    const type = types[nodes[i + iType]];
    const name = type === 'object' || type === 'closure' ? `${type}:${strings[nodes[i + iName]]}` : type;
    const e = by.get(name) ?? { count: 0, size: 0 };
    e.count += 1;
    e.size += nodes[i + iSize];
    by.set(name, e);
  }
  return by;
}
const [a, b] = process.argv.slice(2).map(summarize);
const rows = [...(b ?? a).entries()]
  .map(([name, e]) => {
    const base = b ? (a.get(name) ?? { count: 0, size: 0 }) : { count: 0, size: 0 };
    return { name, count: e.count - base.count, size: e.size - base.size, total: e.size };
  })
  .sort((x, y) => y.size - x.size)
  .slice(0, 40);
for (const r of rows)
  console.log(
    `${(r.size / 1048576).toFixed(2).padStart(8)} MB ${String(r.count).padStart(9)}  ${r.name.slice(0, 120)}`,
  );
