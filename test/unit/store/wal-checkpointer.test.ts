import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../../server/store/database.js';
import { WalCheckpointer } from '../../../server/store/wal-checkpointer.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const tempDir = useTempDir('topod-wal-');

/** Commits enough rows one at a time that the WAL holds frames a checkpoint must copy. */
function writeRows(db: ReturnType<typeof openDatabase>, count: number): void {
  db.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, payload BLOB)');
  const insert = db.prepare('INSERT INTO filler (payload) VALUES (?)');
  for (let i = 0; i < count; i += 1) insert.run(Buffer.alloc(2048, i % 251));
}

describe('WalCheckpointer', () => {
  it("turns off the serving connection's own checkpoints and copies the WAL from a worker thread", async () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    const db = openDatabase(file);
    const debug = vi.fn();
    const checkpointer = new WalCheckpointer(db, file, { debug, warn: vi.fn() });
    try {
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      writeRows(db, 1500);
      checkpointer.request();
      checkpointer.request();
      checkpointer.request();
      await checkpointer.settled();
      const outcomes = debug.mock.calls.map(([outcome]) => outcome as { busy: number; walFrames: number; checkpointedFrames: number });
      // Three requests while one ran: that one and one more, never three.
      expect(outcomes).toHaveLength(2);
      expect(outcomes[0]!.walFrames).toBeGreaterThan(1000);
      expect(outcomes[0]!.checkpointedFrames).toBe(outcomes[0]!.walFrames);
      // Nothing was left for the serving connection to copy.
      const [left] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
      expect(left!.checkpointed).toBe(left!.log);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it('says when a checkpoint fails, and keeps serving requests', async () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    const db = openDatabase(file);
    const warn = vi.fn();
    const checkpointer = new WalCheckpointer(db, path.join(tempDir(), 'missing.sqlite'), { debug: vi.fn(), warn });
    try {
      checkpointer.request();
      await checkpointer.settled();
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ err: expect.objectContaining({ code: 'SQLITE_CANTOPEN' }) }),
        expect.stringContaining('WAL checkpoint failed'),
      );
    } finally {
      await checkpointer.close();
      db.close();
    }
  });
});
