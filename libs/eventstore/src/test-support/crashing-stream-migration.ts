/**
 * A process killed in the middle of a stream migration, for `stream-migration.int.spec.ts`:
 *
 *   node -r scripts/register.cjs crashing-stream-migration.ts <source file> <target file> <prefix> <kill after N events>
 *
 * Runs `migrateStreams` and SIGKILLs itself right after the Nth event is inserted (inside the transaction).
 */
import { SqliteEventStore } from '../sqlite/sqlite-event-store';
import { migrateStreams } from '../stream-migration';

const [sourcePath, targetPath, prefix, killAfter] = process.argv.slice(2);
if (!sourcePath || !targetPath || !prefix || !killAfter)
  throw new Error('usage: crashing-stream-migration <source> <target> <prefix> <n>');
const target = new SqliteEventStore(targetPath);
migrateStreams({
  name: 'crash-test',
  sourcePath,
  target: target.database,
  streamPrefixes: [prefix],
  onEventCopied: (copied) => {
    if (copied === Number(killAfter)) process.kill(process.pid, 'SIGKILL');
  },
});
process.stdout.write('finished without being killed\n');
