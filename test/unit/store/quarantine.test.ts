/**
 * One unreadable result row must not stop the daemon (before: SyntaxError or
 * "TypeError … setting 'resultId'" at boot, a restart loop under systemd).
 * The row is skipped, marked quarantined (kept for inspection, reported
 * once), and the next readable result is served — or none, so the GPU is
 * probed again.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore, type NewResult, type QuarantinedRow } from '../../../server/store/results.js';
import { gpuIdentity, resultRow } from '../../helpers/fakes.js';

function result(l1: number): NewResult {
  return resultRow(l1, { raw: [] });
}

function setup() {
  const db = openDatabase(':memory:');
  new GpuStore(db).seen(gpuIdentity());
  const quarantined: QuarantinedRow[] = [];
  const results = new ResultStore(db, { onQuarantine: (row) => quarantined.push(row) });
  return { db, results, quarantined };
}

const KEY = { gpuUuid: gpuIdentity().uuid, driverVersion: '580.1', probeVersion: 'p1' };

describe('unreadable result rows', () => {
  it.each([
    ['a truncated document', `{"truncated`, /document is not JSON/],
    ['a document missing its fields', '{"schemaVersion":2}', /no "probe" object/],
    ['a document that is not an object', '[1,2]', /document is not a JSON object/],
    ['a document without schemaVersion', '{"probe":{},"elements":{}}', /no schemaVersion/],
  ])('%s is skipped for the previous result, quarantined once and kept', (_name, document, reason) => {
    const { db, results, quarantined } = setup();
    const good = results.insert(result(100));
    const bad = results.insert(result(200));
    db.prepare('UPDATE probe_results SET document = ? WHERE id = ?').run(document, bad);
    expect(results.latestFor(KEY)?.id).toBe(good);
    expect(quarantined).toEqual([{ resultId: bad, gpuUuid: KEY.gpuUuid, reason: expect.stringMatching(reason) }]);
    // Reported once: the mark keeps it out of every later read, and the row is still there to inspect.
    expect(results.latestForGpu(KEY.gpuUuid)?.id).toBe(good);
    expect(results.get(bad)).toBeNull();
    expect(quarantined).toHaveLength(1);
    expect(db.prepare('SELECT document, quarantined FROM probe_results WHERE id = ?').get(bad)).toEqual({
      document,
      quarantined: expect.stringMatching(reason),
    });
    expect(results.history(KEY.gpuUuid).map((r) => r.id)).toEqual([good]);
  });

  it('with no readable result left, the GPU has none (so it is probed again)', () => {
    const { db, results, quarantined } = setup();
    const only = results.insert(result(100));
    db.prepare('UPDATE probe_results SET configuration = ? WHERE id = ?').run('{oops', only);
    expect(results.latestFor(KEY)).toBeNull();
    expect(results.latestForGpu(KEY.gpuUuid)).toBeNull();
    expect(quarantined.map((q) => q.reason)).toEqual([expect.stringMatching(/configuration is not JSON/)]);
  });

  it('a job row with an unreadable `only` list is listed with only: null', () => {
    const db = openDatabase(':memory:');
    const jobs = new JobStore(db);
    const job = jobs.create({ gpuUuid: 'GPU-x', reason: 'requested', requestedBy: 'test', only: ['l1'], force: false });
    db.prepare('UPDATE probe_jobs SET only_elements = ? WHERE id = ?').run('["l1"', job.id);
    expect(jobs.get(job.id)).toMatchObject({ id: job.id, only: null });
    expect(jobs.list({}).map((j) => j.id)).toEqual([job.id]);
  });
});
