#!/usr/bin/env bash
# Where a discovery's time goes on the GPU (issue 19): bench:probe full and
# `--only l1`, RUNS times each, with a per-operation trace (bench) and the
# probe's own host-time spans (TOPOD_PROBE_PROFILE), then bench:first-topology
# with the daemon's timeline. Outputs one tar in $OUT.
# A .device/snap.tar.xz (dist/ and the probe built from one commit) replaces
# the working tree's builds, so helpers' unfinished edits cannot leak in.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-speed-out}
RUNS=${RUNS:-2}
mkdir -p "$OUT/speed"
bash scripts/device/unpack.sh
[ -f .device/snap.tar.xz ] && tar -xJf .device/snap.tar.xz
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,persistence_mode --format=csv > "$OUT/speed/gpu.txt" 2>&1
for run in $(seq "$RUNS"); do
  TOPOD_PROBE_PROFILE="$OUT/speed/full-$run.profile" node dist/bench/probe.js --backend native --trace "$OUT/speed/full-$run.trace.jsonl" > "$OUT/speed/full-$run.txt" 2>&1
  TOPOD_PROBE_PROFILE="$OUT/speed/l1-$run.profile" node dist/bench/probe.js --backend native --only l1 --trace "$OUT/speed/l1-$run.trace.jsonl" > "$OUT/speed/l1-$run.txt" 2>&1
done
node dist/bench/first-topology.js --runs "$RUNS" --timeline > "$OUT/speed/first-topology.txt" 2>&1
tar -C "$OUT" -czf "$OUT/speed.tgz" speed && rm -rf "$OUT/speed"
