/**
 * The first `npm start` on a fresh machine creates DATA_DIR: 0700, every file in it 0600 (bus.db included), whatever
 * the umask, and no warning about a directory the service made itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';

let fixture: EmbeddedFixture | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await fixture?.stop();
  fixture = undefined;
});

it('creates a missing data directory 0700 with every file 0600, and warns of nothing', async () => {
  const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const umask = process.umask(0o022);
  try {
    const parent = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'switchyard-modes-'));
    const dataDir = path.join(parent, 'data');
    fixture = await startEmbeddedFixture('data-dir-modes', { DATA_DIR: dataDir });
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const wider = fs
      .readdirSync(dataDir)
      .map((name) => ({ name, mode: fs.statSync(path.join(dataDir, name)).mode & 0o777 }))
      .filter(({ mode }) => mode !== 0o600);
    expect(fs.readdirSync(dataDir)).toContain('bus.db');
    expect(wider).toEqual([]);
    const dataDirWarnings = warnings.mock.calls.filter((call) => JSON.stringify(call).includes('DATA_DIR_MODE'));
    expect(dataDirWarnings).toEqual([]);
    await fixture.stop();
    fixture = undefined;
    fs.rmSync(parent, { recursive: true, force: true });
  } finally {
    process.umask(umask);
  }
});
