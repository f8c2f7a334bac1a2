-- topod schema v1. Forward-only: never edit a migration that has shipped; add the next number.

CREATE TABLE gpus (
  uuid          TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  vendor        TEXT NOT NULL,
  pci_bus_id    TEXT,
  last_index    INTEGER NOT NULL,
  first_seen_at TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL
);

-- Results are history: rows are only ever inserted.
CREATE TABLE probe_results (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  gpu_uuid         TEXT NOT NULL REFERENCES gpus(uuid),
  driver_version   TEXT NOT NULL,
  probe_version    TEXT NOT NULL,
  analysis_version TEXT NOT NULL,
  configuration    TEXT NOT NULL,            -- JSON: backend, only, force, ...
  created_at       TEXT NOT NULL,
  duration_ms      INTEGER NOT NULL,
  document         TEXT NOT NULL,            -- JSON ResultDocument
  simulated        INTEGER NOT NULL CHECK (simulated IN (0, 1)),
  job_id           TEXT
);
CREATE INDEX probe_results_by_key ON probe_results (gpu_uuid, driver_version, probe_version, id);

-- Raw measurement series behind a result, gzip-compressed JSON, so a better
-- analysis can re-evaluate old probes without touching the GPU.
CREATE TABLE raw_series (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  result_id INTEGER NOT NULL REFERENCES probe_results(id),
  name      TEXT NOT NULL,
  op        TEXT NOT NULL,
  encoding  TEXT NOT NULL,
  data      BLOB NOT NULL
);
CREATE INDEX raw_series_by_result ON raw_series (result_id);

CREATE TABLE probe_jobs (
  id            TEXT PRIMARY KEY,
  gpu_uuid      TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  phase         TEXT,
  progress      REAL NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
  error_code    TEXT,
  error_message TEXT,
  reason        TEXT NOT NULL,
  requested_by  TEXT NOT NULL,
  only_elements TEXT,                          -- JSON array or NULL (everything)
  force         INTEGER NOT NULL DEFAULT 0,
  result_id     INTEGER REFERENCES probe_results(id),
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  finished_at   TEXT
);
CREATE INDEX probe_jobs_by_gpu ON probe_jobs (gpu_uuid, created_at);
-- One job per GPU at a time, enforced by the database as well as the scheduler.
CREATE UNIQUE INDEX probe_jobs_one_active ON probe_jobs (gpu_uuid) WHERE state IN ('queued', 'running');
