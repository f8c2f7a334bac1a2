/**
 * Keyset paging of probe jobs (JobStore.page): a client walks a history far
 * longer than one page (the API caps a page at 500) and sees every job once,
 * in one stable order, even with jobs created in the same millisecond and
 * new jobs arriving while it walks.
 */
import { describe, expect, it } from 'vitest';
import type { JobPosition, ProbeJob } from '../../../server/model/job.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { gpuIdentity } from '../../helpers/fakes.js';

const OTHER = gpuIdentity({ uuid: 'GPU-99999999-2222-3333-4444-555555555555', index: 1 });

function setup() {
  const db = openDatabase(':memory:');
  new GpuStore(db).seen(gpuIdentity());
  new GpuStore(db).seen(OTHER);
  const jobs = new JobStore(db);
  /** A finished job (one active job per GPU is the database's rule) created at `at`. */
  const add = (at: string, gpuUuid = gpuIdentity().uuid, state: 'failed' | 'cancelled' = 'failed'): ProbeJob => {
    const job = jobs.create({ gpuUuid, reason: 'r', requestedBy: 't', only: null, force: false }, at);
    jobs.finish(job.id, { state, error: { code: 'C', message: 'c' } });
    return job;
  };
  return { db, jobs, add };
}

/** Every job, by following `next` from the first page. */
function walk(
  jobs: JobStore,
  limit: number,
  query: { gpu?: string; state?: 'failed' | 'cancelled' } = {},
): { ids: string[]; pages: number } {
  const ids: string[] = [];
  let after: JobPosition | null = null;
  let pages = 0;
  do {
    const page = jobs.page({ ...query, limit }, after);
    ids.push(...page.jobs.map((j) => j.id));
    pages += 1;
    after = page.next;
    if (after) expect(page.jobs).toHaveLength(limit);
  } while (after);
  return { ids, pages };
}

const at = (second: number): string => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

describe('JobStore.page', () => {
  it('walks 1203 jobs past the 500 cap, each once, newest first, ties in one millisecond by id', () => {
    const { db, jobs, add } = setup();
    const created: ProbeJob[] = [];
    db.transaction(() => {
      // Three jobs per second: many share a created_at.
      for (let i = 0; i < 1203; i++) created.push(add(at(Math.floor(i / 3))));
    })();
    const { ids, pages } = walk(jobs, 500);
    expect(pages).toBe(3);
    expect(ids).toHaveLength(1203);
    expect(new Set(ids).size).toBe(1203);
    const expected = [...created].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)).map((j) => j.id);
    expect(ids).toEqual(expected);
  });

  it('says there is no next page when the last page is exactly full', () => {
    const { jobs, add } = setup();
    for (let i = 0; i < 4; i++) add(at(i));
    const first = jobs.page({ limit: 2 }, null);
    expect(first.next).not.toBeNull();
    const second = jobs.page({ limit: 2 }, first.next);
    expect(second.jobs).toHaveLength(2);
    expect(second.next).toBeNull();
  });

  it('neither repeats nor skips a job when new ones are created while a client walks', () => {
    const { jobs, add } = setup();
    const old = Array.from({ length: 10 }, (_, i) => add(at(i)));
    const first = jobs.page({ limit: 4 }, null);
    add(at(100));
    add(at(5)); // the same time as an old job: sorted among them by id, before or after the cursor, never both
    const rest = walk(jobs, 4);
    const after = [...first.jobs];
    let next = first.next;
    while (next) {
      const page = jobs.page({ limit: 4 }, next);
      after.push(...page.jobs);
      next = page.next;
    }
    const seen = after.map((j) => j.id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const job of old) expect(seen).toContain(job.id);
    expect(rest.ids).toHaveLength(12);
  });

  it('filters by GPU and state like list(), and list() keeps its own order', () => {
    const { jobs, add } = setup();
    for (let i = 0; i < 7; i++) add(at(i), i % 2 === 0 ? gpuIdentity().uuid : OTHER.uuid, i % 3 === 0 ? 'cancelled' : 'failed');
    const byGpu = walk(jobs, 2, { gpu: OTHER.uuid }).ids;
    expect(byGpu).toEqual(jobs.list({ gpu: OTHER.uuid, limit: 100 }).map((j) => j.id));
    expect(byGpu).toHaveLength(3);
    const cancelled = walk(jobs, 1, { state: 'cancelled' }).ids;
    expect(cancelled).toEqual(jobs.list({ state: 'cancelled', limit: 100 }).map((j) => j.id));
    expect(cancelled).toHaveLength(3);
  });
});
