-- topod schema v3: rows that cannot be read are set aside, and history is pruned.

-- A result whose document or configuration cannot be read (truncated JSON, a
-- document missing its fields): why it was set aside. Such a row is kept for
-- inspection but never served, and its GPU is re-probed.
ALTER TABLE probe_results ADD COLUMN quarantined TEXT;

-- Retention deletes finished jobs by age (server/store/retention.ts).
CREATE INDEX probe_jobs_by_finished ON probe_jobs (finished_at) WHERE finished_at IS NOT NULL;
