#!/usr/bin/env bash
# bench:serve-while-probing before and after a change, on one board: the
# build in .device/before.tar.xz (an older commit's dist/, unpacked under
# before/ beside links to everything else here) and this one, alternately,
# RUNS times each on the native backend; then 8 simulated GPUs once each.
# One tar in $OUT (default /tmp/topod-serve-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-serve-out}
RUNS=${RUNS:-8}
mkdir -p "$OUT/serve"
bash scripts/device/unpack.sh > "$OUT/serve/unpack.log" 2>&1
tar -xJf .device/before.tar.xz
for entry in *; do [ "$entry" = dist ] || [ "$entry" = before ] || ln -sfn "../$entry" "before/$entry"; done
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,uuid,driver_version,persistence_mode --format=csv > "$OUT/serve/gpu.txt" 2>&1
for run in $(seq "$RUNS"); do
  for build in before after; do
    root=.; [ $build = before ] && root=before
    node "$root/dist/bench/serve-while-probing.js" --backend native --json "$OUT/serve/native-$build-$run.json" > "$OUT/serve/native-$build-$run.txt" 2>&1
  done
done
for build in before after; do
  root=.; [ $build = before ] && root=before
  node "$root/dist/bench/serve-while-probing.js" --gpus 8 --concurrency 8 --json "$OUT/serve/sim-$build.json" > "$OUT/serve/sim-$build.txt" 2>&1
done
tar -C "$OUT" -czf "$OUT/serve.tgz" serve && rm -rf "$OUT/serve"
