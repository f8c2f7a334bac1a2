-- topod schema v4: a probe of a GPU another process uses waits (state 'waiting',
-- issue 17) and says since when; an admin may ask to measure it anyway
-- (even_if_busy). SQLite cannot change a CHECK in place: the table is rebuilt
-- (nothing references probe_jobs, so its rows move as they are).
CREATE TABLE probe_jobs_v4 (
  id            TEXT PRIMARY KEY,
  gpu_uuid      TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('queued', 'waiting', 'running', 'succeeded', 'failed', 'cancelled')),
  phase         TEXT,
  progress      REAL NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
  error_code    TEXT,
  error_message TEXT,
  reason        TEXT NOT NULL,
  requested_by  TEXT NOT NULL,
  only_elements TEXT,                          -- JSON array or NULL (everything)
  force         INTEGER NOT NULL DEFAULT 0,
  even_if_busy  INTEGER NOT NULL DEFAULT 0,    -- measure even while other processes use the GPU
  waiting_since TEXT,                          -- when the job first found the GPU busy
  result_id     INTEGER REFERENCES probe_results(id),
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  finished_at   TEXT
);
INSERT INTO probe_jobs_v4 (id, gpu_uuid, state, phase, progress, error_code, error_message, reason, requested_by, only_elements, force, result_id, created_at, started_at, finished_at)
  SELECT id, gpu_uuid, state, phase, progress, error_code, error_message, reason, requested_by, only_elements, force, result_id, created_at, started_at, finished_at FROM probe_jobs;
DROP TABLE probe_jobs;
ALTER TABLE probe_jobs_v4 RENAME TO probe_jobs;
CREATE INDEX probe_jobs_by_gpu ON probe_jobs (gpu_uuid, created_at);
-- One job per GPU at a time, enforced by the database as well as the scheduler; a waiting job is one of them.
CREATE UNIQUE INDEX probe_jobs_one_active ON probe_jobs (gpu_uuid) WHERE state IN ('queued', 'waiting', 'running');
CREATE INDEX probe_jobs_by_finished ON probe_jobs (finished_at) WHERE finished_at IS NOT NULL;
