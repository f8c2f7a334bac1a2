#!/usr/bin/env bash
# Issue 19's before/after on one board: the builds of .device/before.tar.xz
# (an older commit, unpacked under before/) and .device/snap.tar.xz (this
# one) run alternately, RUNS times: bench:probe full and --only l1 (phases,
# elements and confidences as JSON), then bench:first-topology. One tar in $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-compare-out}
RUNS=${RUNS:-3}
mkdir -p "$OUT/compare"
bash scripts/device/unpack.sh >/dev/null
tar -xJf .device/snap.tar.xz && tar -xJf .device/before.tar.xz
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,uuid,driver_version,persistence_mode --format=csv > "$OUT/compare/gpu.txt" 2>&1
for run in $(seq "$RUNS"); do
  for build in before after; do
    probe=native/probe/build/topod-probe; [ $build = before ] && probe=before/native/probe/build/topod-probe
    node dist/bench/probe.js --backend native --probe "$probe" --out "$OUT/compare/$build-full-$run.json" > "$OUT/compare/$build-full-$run.txt" 2>&1
    node dist/bench/probe.js --backend native --probe "$probe" --only l1 --out "$OUT/compare/$build-l1-$run.json" > "$OUT/compare/$build-l1-$run.txt" 2>&1
  done
done
node dist/bench/first-topology.js --runs "$RUNS" --daemon before/dist/server/main.js > "$OUT/compare/before-first-topology.txt" 2>&1
node dist/bench/first-topology.js --runs "$RUNS" > "$OUT/compare/after-first-topology.txt" 2>&1
node dist/bench/probe.js --backend sim > "$OUT/compare/after-sim.txt" 2>&1
tar -C "$OUT" -czf "$OUT/compare.tgz" compare && rm -rf "$OUT/compare"
