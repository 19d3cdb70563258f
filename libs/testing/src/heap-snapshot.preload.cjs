// Preload of the processes whose memory a test inspects (`heapSnapshotEnv` in heap-snapshots.ts puts it in
// NODE_OPTIONS with SWITCHYARD_HEAP_SNAPSHOT_DIR). On SIGUSR2 it writes a heap snapshot of the process to
// `<dir>/<pid>-<n>.heapsnapshot`: under a `.partial` name first, renamed once complete, so a reader never sees half
// of one. V8 truncates each string of a snapshot to 1,024 characters by default, which would hide a card number
// in a longer text (a Kafka message, a request body): the limit is lifted here. Numbers are written with their
// values, so a card number held as a JS number is in the snapshot as well.
//
// A test shows its scan finds what a process holds by planting: the text of `<dir>/<pid>.hold`, when that file is
// there at the signal, is kept by the process from then on (the file is removed), before the snapshot is written.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');

const dir = process.env.SWITCHYARD_HEAP_SNAPSHOT_DIR;
if (dir) {
  v8.setFlagsFromString('--heap-snapshot-string-limit=1000000000');
  const held = [];
  let written = 0;
  process.on('SIGUSR2', () => {
    const hold = path.join(dir, `${process.pid}.hold`);
    if (fs.existsSync(hold)) {
      held.push(fs.readFileSync(hold, 'utf8'));
      fs.rmSync(hold);
    }
    written += 1;
    const file = path.join(dir, `${process.pid}-${written}.heapsnapshot`);
    v8.writeHeapSnapshot(`${file}.partial`, { exposeNumericValues: true });
    fs.renameSync(`${file}.partial`, file);
  });
}
