#!/usr/bin/env bash
# TOPOD_WORKER_NICE on a GPU host, from this checkout (after pack.sh here,
# carried as .device/): bench:serve-while-probing on the native backend with
# the worker threads at nice 0 and at 10, alternately, RUNS times; the same
# with 8 simulated GPUs probing at once; then the daemon's first probe at each
# value, its served document kept, to show the figures do not move with the
# host side's priority. One tar in $OUT (default /tmp/topod-nice-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-nice-out}
RUNS=${RUNS:-4}
mkdir -p "$OUT/nice"
bash scripts/device/unpack.sh > "$OUT/nice/unpack.log" 2>&1
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
daemon=
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,uuid,driver_version,persistence_mode --format=csv > "$OUT/nice/gpu.txt" 2>&1
for run in $(seq "$RUNS"); do
  for nice in 0 10; do
    node dist/bench/serve-while-probing.js --backend native --worker-nice "$nice" --json "$OUT/nice/native-$nice-$run.json" > "$OUT/nice/native-$nice-$run.txt" 2>&1
  done
done
for nice in 0 10; do
  node dist/bench/serve-while-probing.js --gpus 8 --concurrency 8 --worker-nice "$nice" --json "$OUT/nice/sim-$nice.json" > "$OUT/nice/sim-$nice.txt" 2>&1
done
for nice in 0 10; do
  rm -f /tmp/topod-nice.sqlite*
  TOPOD_BACKEND=native TOPOD_DB=/tmp/topod-nice.sqlite TOPOD_PORT=18080 TOPOD_WORKER_NICE=$nice node --max-semi-space-size=4 dist/server/main.js > "$OUT/nice/daemon-$nice.log" 2>&1 &
  daemon=$!
  node scripts/device/daemon-watch.mjs --until succeeded,failed --timeout-s 120 --out "$OUT/nice/document-$nice.json" > "$OUT/nice/watch-$nice.log" 2>&1
  kill -TERM "$daemon"; wait "$daemon" 2>/dev/null; daemon=
done
tar -C "$OUT" -czf "$OUT/nice.tgz" nice && rm -rf "$OUT/nice"
