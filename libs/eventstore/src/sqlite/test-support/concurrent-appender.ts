/**
 * A second OS process writing to the same SQLite file, for `sqlite-event-store.int.spec.ts`:
 *
 *   node -r scripts/register.cjs concurrent-appender.ts <file> <stream prefix> <streams> <workers> <appends per worker>
 *
 * Each worker loops like a command handler: read the stream, append with the revision read, and on a conflict
 * read again. Prints `ready` once the store is open, then one JSON line `{ appended, conflicts }`. Any error
 * other than the typed conflict is printed and exits with code 1.
 */
import { WrongExpectedRevisionError } from '../../event-store';
import { SqliteEventStore } from '../sqlite-event-store';

async function main(): Promise<void> {
  const [file, prefix, streams, workers, appendsPerWorker] = process.argv.slice(2);
  if (!file || !prefix)
    throw new Error('usage: concurrent-appender <file> <prefix> <streams> <workers> <appends per worker>');
  const store = new SqliteEventStore(file);
  process.stdout.write('ready\n');
  let appended = 0;
  let conflicts = 0;
  const worker = async (index: number): Promise<void> => {
    for (let done = 0; done < Number(appendsPerWorker); ) {
      const streamId = `${prefix}-${(index + done) % Number(streams)}`;
      const current = await store.readStream(streamId);
      const last = current.at(-1);
      try {
        await store.append(streamId, [{ type: 'AppendedByChild', data: { pid: process.pid, index, done } }], {
          expectedRevision: last ? last.revision : 'no_stream',
        });
        appended += 1;
        done += 1;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        conflicts += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Number(workers) }, (_, index) => worker(index)));
  await store.close();
  process.stdout.write(`${JSON.stringify({ appended, conflicts })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
