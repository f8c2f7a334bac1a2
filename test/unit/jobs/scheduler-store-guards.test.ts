/**
 * The scheduler's edges with the store and other processes: a full disk
 * (SQLITE_FULL on the result transaction) fails the job with
 * TOPOD_ERR_STORE_WRITE and marks the store degraded instead of escaping as
 * an unhandled rejection; the GPU lock makes a probe wait for a user's own
 * benchmark; retention runs after each stored result.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProbeScheduler } from '../../../server/jobs/scheduler.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { StoreHealth } from '../../../server/store/health.js';
import { JobStore } from '../../../server/store/jobs.js';
import { gpuLocker } from '../../../server/store/gpu-lock.js';
import { LockThread } from '../../../server/store/lock-thread.js';
import { acquireLock, gpuLockFile } from '../../../server/store/lock.js';
import { ResultStore } from '../../../server/store/results.js';
import { createAnalysisExecutor } from '../../../server/results/analysis-executor.js';
import { ResultLifecycle } from '../../../server/results/lifecycle.js';
import type { GpuIdentity } from '../../../server/model/gpu.js';
import { controlledDiscover, fakeAnalysis, gpuIdentity, inertBackend, outcome, silentLogger, until } from '../../helpers/fakes.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const gpu = gpuIdentity();
const request = { reason: 'test', requestedBy: 'test', only: null, force: false };

function setup(
  file: string,
  extra: Partial<ConstructorParameters<typeof ProbeScheduler>[0]> & { afterStore?: (gpuUuid: string) => void } = {},
) {
  const db = openDatabase(file);
  new GpuStore(db).seen(gpu);
  const jobs = new JobStore(db);
  const results = new ResultStore(db);
  const health = new StoreHealth(db, file, 0);
  const discover = controlledDiscover();
  const { afterStore, ...schedulerExtra } = extra;
  const analysis = fakeAnalysis('a1');
  const lifecycle = new ResultLifecycle({
    db,
    results,
    jobs,
    analysis: createAnalysisExecutor(analysis),
    analysisVersion: analysis.version,
    logger: silentLogger,
    storeHealth: health,
    ...(afterStore ? { afterStore } : {}),
  });
  const scheduler = new ProbeScheduler({
    jobs,
    backend: inertBackend(),
    discover,
    lifecycle,
    concurrency: 1,
    logger: silentLogger,
    progressWriteMs: 0,
    storeHealth: health,
    ...schedulerExtra,
  });
  return { db, jobs, results, health, discover, scheduler };
}

describe('scheduler and the store', () => {
  const tempDir = useTempDir();

  it('a full disk on the result transaction fails the job, keeps the previous result and makes readiness say degraded', async () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    const { db, results, health, discover, scheduler } = setup(file);
    scheduler.enqueue(gpu, request);
    await until(() => discover.calls.length === 1);
    discover.calls[0]?.resolve(outcome(100));
    await scheduler.whenIdle();
    const previous = results.latestForGpu(gpu.uuid);
    expect(health.check()).toMatchObject({ ok: true });

    const failed: unknown[] = [];
    scheduler.on('failed', (job) => failed.push(job));
    scheduler.enqueue(gpu, request);
    await until(() => discover.calls.length === 2);
    // No room for one more page: what SQLite says on a full disk (SQLITE_FULL).
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const big = outcome(200);
    big.raw.push(
      ...Array.from({ length: 50 }, (_, i) => ({
        name: `l1.size.pad${i}`,
        op: 'pchase',
        args: {},
        result: { noise: Array.from({ length: 2000 }, () => Math.random()) },
      })),
    );
    discover.calls[1]?.resolve(big);
    await scheduler.whenIdle();
    expect(failed).toEqual([
      expect.objectContaining({
        state: 'failed',
        error: {
          code: 'TOPOD_ERR_STORE_WRITE',
          message: expect.stringMatching(/^the result could not be stored: database or disk is full/),
        },
      }),
    ]);
    expect(results.latestForGpu(gpu.uuid)?.id).toBe(previous?.id);
    expect(scheduler.activeFor(gpu.uuid)).toBeNull();
    expect(health.check()).toMatchObject({ ok: false, detail: expect.stringMatching(/^degraded: a write failed .*SQLITE_FULL/) });

    // Room again: the next stored result clears the degraded state.
    db.pragma('max_page_count = 1073741823');
    scheduler.enqueue(gpu, request);
    await until(() => discover.calls.length === 3);
    discover.calls[2]?.resolve(outcome(300));
    await scheduler.whenIdle();
    expect(results.latestForGpu(gpu.uuid)?.document.elements.l1?.size?.value).toBe(300);
    expect(health.check()).toMatchObject({ ok: true });
    db.close();
  });

  it("waits for the GPU lock a user's benchmark holds, saying so in the job phase", async () => {
    const dir = tempDir();
    const lockFile = gpuLockFile(dir, gpu.uuid);
    const user = spawn('flock', [lockFile, 'sh', '-c', 'echo held; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((r) => user.stdout.once('data', r));
    // The daemon's own: the lock tried at once, then waited for, each helper spawned by the lock thread.
    const locks = new LockThread();
    const waits: string[] = [];
    const lockGpu = gpuLocker(dir, {
      acquire: async (file, options) => {
        const attempt = await locks.acquire(file, options);
        if (!attempt.acquired) waits.push(attempt.owner);
        return attempt;
      },
    });
    const { jobs, discover, scheduler, db } = setup(path.join(dir, 'topod.sqlite'), { lockGpu });
    const job = scheduler.enqueue(gpu, request);
    await until(() => jobs.get(job.id)?.phase === 'waiting for the GPU lock');
    await new Promise((r) => setTimeout(r, 100));
    expect(discover.calls).toHaveLength(0);
    expect(waits).toHaveLength(1);
    await new Promise<void>((resolve) => {
      user.once('close', () => resolve());
      user.stdin.end();
    });
    await until(() => discover.calls.length === 1);
    discover.calls[0]?.resolve(outcome(1));
    await scheduler.whenIdle();
    expect(jobs.get(job.id)).toMatchObject({ state: 'succeeded' });
    // Released after the probe: someone else can take it at once.
    const after = await acquireLock(lockFile, { wait: false, owner: 'x' });
    expect(after.acquired).toBe(true);
    if (after.acquired) await after.lock.release();
    await locks.close();
    db.close();
  });

  it('calls afterStore after each stored result (retention)', async () => {
    const pruned: string[] = [];
    const { discover, scheduler, db } = setup(':memory:', { afterStore: (uuid) => pruned.push(uuid) });
    scheduler.enqueue(gpu, request);
    await until(() => discover.calls.length === 1);
    discover.calls[0]?.resolve(outcome(1));
    await scheduler.whenIdle();
    expect(pruned).toEqual([gpu.uuid]);
    db.close();
  });
});
