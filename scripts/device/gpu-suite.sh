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

# 2b. Probe once: a restart on the same database serves the cached result (no new job), /readyz is ready,
#     and an admin re-analysis rebuilds the result from its stored raw series without the GPU.
TOPOD_BACKEND=native TOPOD_DB=$db TOPOD_PORT=18080 node --import tsx server/main.ts > "$OUT/daemon-restart.log" 2>&1 &
daemon=$!
for i in $(seq 60); do
  code=$(node -e "fetch('http://127.0.0.1:18080/v1/gpus/0/topology').then(r=>{console.log(r.status)},()=>console.log(0))")
  [ "$code" = 200 ] && break; sleep 1
done
node -e "
const base='http://127.0.0.1:18080';
const get=u=>fetch(base+u).then(async r=>({status:r.status,body:await r.json()}));
(async()=>{
  const before=await get('/v1/gpus/0/topology'); const ready=await get('/readyz'); const jobs=await get('/v1/jobs');
  const re=await fetch(base+'/v1/gpus/0/reanalyse',{method:'POST'}).then(async r=>({status:r.status,body:await r.json()}));
  const after=await get('/v1/gpus/0/topology'); const gpus=await get('/v1/gpus');
  console.log(JSON.stringify({readyz:ready,jobsAfterRestart:jobs.body.jobs.map(j=>[j.reason,j.state]),resultBefore:before.body.probe,
    reanalyse:re,resultAfter:after.body.probe,l1Before:before.body.elements.l1,l1After:after.body.elements.l1,gpus:gpus.body},null,1));
})()" > "$OUT/restart-reanalyse.json" 2>&1
kill -TERM $daemon; wait $daemon
cp "$db" "$OUT/topod-native.sqlite" 2>/dev/null
echo '{"id":1,"op":"hello","args":{}}' | native/probe/build/topod-probe > "$OUT/hello.json" 2>/dev/null
echo "hello ops: $(node -e "const h=JSON.parse(require('fs').readFileSync('$OUT/hello.json','utf8').split('\\n')[0]);console.log((h.result&&h.result.ops||[]).join(','))")" >> "$summary"

# 3. Probe benchmark (protocol included)
node --import tsx bench/probe-ops.ts > "$OUT/bench-probe-ops.log" 2>&1
tail -3 "$OUT/bench-probe-ops.log" >> "$summary"
grep -E "Tests|Test Files" "$OUT/gpu-tests.log" >> "$summary"
cat "$summary"
