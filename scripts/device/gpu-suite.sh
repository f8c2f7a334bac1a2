#!/usr/bin/env bash
# Runs topod's GPU checks on a GPU host from this checkout (after pack.sh here,
# carried as .device/): GPU tests, the daemon on the native backend end to end,
# and the probe benchmark. Writes logs to $OUT (default /tmp/topod-gpu-out).
# Never changes device settings: it only reads NVML and runs the probe.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-gpu-out}
mkdir -p "$OUT"
bash scripts/device/unpack.sh
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
summary="$OUT/summary.txt"
{
  echo "date: $(date -u +%FT%TZ)"; uname -a; nproc
  nvidia-smi --query-gpu=name,uuid,driver_version,mig.mode.current,clocks.sm,clocks.max.sm --format=csv
  start=$(date +%s%N); for i in $(seq 20); do nvidia-smi --query-gpu=uuid,driver_version,mig.mode.current --format=csv,noheader >/dev/null; done
  echo "nvidia-smi --query-gpu: $(( ($(date +%s%N) - start) / 20000000 )) ms per call (mean of 20)"
} > "$summary" 2>&1

# 1. GPU tests (real NVML, nvml.h layout check, every probe op)
node node_modules/vitest/vitest.mjs run test/gpu > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests exit: $?" >> "$summary"

# 2. The daemon on the native backend, as a user starts it: real UUID, discovery through the real path.
db=/tmp/topod-native.sqlite; rm -f "$db"*
TOPOD_BACKEND=native TOPOD_DB=$db TOPOD_PORT=18080 node --import tsx server/main.ts > "$OUT/daemon.log" 2>&1 &
daemon=$!
t0=$(date +%s)
for i in $(seq 300); do
  code=$(node -e "fetch('http://127.0.0.1:18080/v1/gpus/0/topology').then(r=>{console.log(r.status)},()=>console.log(0))")
  [ "$code" = 200 ] && break; sleep 1
done
echo "native topology ready after $(( $(date +%s) - t0 )) s (status $code)" >> "$summary"
node -e "
const get=u=>fetch('http://127.0.0.1:18080'+u).then(r=>r.json());
Promise.all([get('/v1/gpus'),get('/v1/gpus/0/topology'),get('/v1/jobs')]).then(([g,t,j])=>console.log(JSON.stringify({gpus:g,topology:t,jobs:j},null,1)))" > "$OUT/daemon-native.json" 2>&1
kill -TERM $daemon; wait $daemon
cp "$db" "$OUT/topod-native.sqlite" 2>/dev/null

# 3. Probe benchmark (protocol included)
node --import tsx bench/probe-ops.ts > "$OUT/bench-probe-ops.log" 2>&1
tail -3 "$OUT/bench-probe-ops.log" >> "$summary"
grep -E "Tests|Test Files" "$OUT/gpu-tests.log" >> "$summary"
cat "$summary"
