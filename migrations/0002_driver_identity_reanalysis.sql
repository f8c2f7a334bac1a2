-- topod schema v2: probe-once identity and re-analysis.

-- The driver version a GPU was last seen with and where it came from (nvml,
-- kernel-module, runtime), so an NVML outage falls back to the last known
-- canonical version instead of the probe runtime's differently spelled one.
ALTER TABLE gpus ADD COLUMN driver_version TEXT;
ALTER TABLE gpus ADD COLUMN driver_source TEXT;

-- A result rebuilt by a newer analysis from another result's raw series.
ALTER TABLE probe_results ADD COLUMN reanalysed_from INTEGER REFERENCES probe_results(id);

-- One row rewritten by the readiness check: proves the store still takes writes.
CREATE TABLE store_heartbeat (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  at TEXT NOT NULL
);
